package robots

import (
	"fmt"
	"testing"

	"github.com/robotsgate/robotsgate/internal/robotsmix"
)

// BenchmarkParseMix parses files of the realistic mix (internal/robotsmix)
// one after the other, as a broad crawl meets them: the parse cost of one
// new origin.
func BenchmarkParseMix(b *testing.B) {
	files := make([][]byte, 512)
	for i := range files {
		files[i] = robotsmix.File(i, fmt.Sprintf("o%d.example", i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		Parse(files[i%len(files)])
	}
}
