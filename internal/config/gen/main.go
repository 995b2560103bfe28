// Command gen writes the configuration reference generated from the
// option table of internal/config to the file named by its argument.
package main

import (
	"fmt"
	"os"

	"github.com/robotsgate/robotsgate/internal/config"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gen FILE")
		os.Exit(2)
	}
	if err := os.WriteFile(os.Args[1], config.Markdown(), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
