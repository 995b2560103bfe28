package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/signing"
)

const publishUsage = "usage: robotsgate publish -out DIR [configuration flags: -config FILE, ...]"

// runPublish implements "robotsgate publish -out DIR": it writes, from
// the configuration (read as serve reads it), the files a crawler
// operator publishes for the sites it visits: the crawler information
// page (index.html), the Web Bot Auth key directory of each
// Signature-Agent URL (under DIR/<host>/<path of the URL>) and a
// Signature Agent Card per signing identity. It prints each file and
// where to serve it. Exit status: 0, 1 when a file cannot be written or
// a key read, 2 for a usage or configuration error.
func runPublish(args []string, env func(string) string, stdout, stderr io.Writer) int {
	out, rest, err := cutOutFlag(args)
	if err != nil || (out == "" && !wantsHelp(rest)) {
		if err == nil {
			err = errors.New("-out DIR is required")
		}
		return publishFail(stderr, 2, "%v (%s)", err, publishUsage)
	}
	cfg, err := loadConfig(rest, env)
	if errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(stdout, publishUsage)
		return 0
	}
	if err != nil {
		return publishFail(stderr, 2, "%v", err)
	}
	ids, err := signing.PublishedIdentities(cfg)
	if err != nil {
		return publishFail(stderr, 1, "%v", err)
	}
	files, err := publishFiles(cfg, ids)
	if err != nil {
		return publishFail(stderr, 2, "%v", err)
	}
	for _, f := range files {
		p := filepath.Join(out, filepath.FromSlash(f.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return publishFail(stderr, 1, "%v", err)
		}
		if err := os.WriteFile(p, f.body, 0o644); err != nil {
			return publishFail(stderr, 1, "%v", err)
		}
		fmt.Fprintf(stdout, "wrote %s\t%s\n", p, f.serve)
	}
	return 0
}

// wantsHelp reports whether args ask for help.
func wantsHelp(args []string) bool {
	for _, a := range args {
		if isHelp(a) {
			return true
		}
	}
	return false
}

// cutOutFlag removes -out DIR (or -out=DIR) from args.
func cutOutFlag(args []string) (out string, rest []string, _ error) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		name, val, hasVal := strings.Cut(strings.TrimPrefix(a, "-"), "=")
		if !strings.HasPrefix(a, "-") || strings.TrimPrefix(name, "-") != "out" {
			rest = append(rest, a)
			continue
		}
		if !hasVal {
			if i+1 >= len(args) {
				return "", nil, errors.New("-out needs a directory")
			}
			i++
			val = args[i]
		}
		out = val
	}
	return out, rest, nil
}

// publishFail prints one line on stderr and returns code.
func publishFail(stderr io.Writer, code int, format string, a ...any) int {
	fmt.Fprintf(stderr, "robotsgate publish: "+format+"\n", a...)
	return code
}

// publishedFile is one file publish writes: its path under DIR
// (slash-separated), its content and where to serve it.
type publishedFile struct {
	path, serve string
	body        []byte
}

// publishFiles returns the files of cfg and its identities.
func publishFiles(cfg config.Config, ids []signing.PublishedIdentity) ([]publishedFile, error) {
	base := strings.TrimSuffix(cfg.Crawler.URL, "/")
	at := func(name string) string {
		if base == "" {
			return "at the crawler's page URL, beside index.html (crawler.url is not set)"
		}
		return "at " + base + "/" + name
	}
	page, err := crawlerPage(cfg, ids)
	if err != nil {
		return nil, err
	}
	files := []publishedFile{{path: "index.html", serve: at(""), body: page}}
	dirs := map[string]bool{}
	for _, id := range ids {
		if id.Agent == "" || (id.User != "" && !id.OwnSigner) {
			continue
		}
		name := cardName(id.User)
		card, err := agentCard(cfg, id)
		if err != nil {
			return nil, err
		}
		files = append(files, publishedFile{path: name, serve: at(name), body: card})
		if dirs[id.Agent] {
			continue
		}
		dirs[id.Agent] = true
		p, err := directoryPath(id.Agent)
		if err != nil {
			return nil, err
		}
		files = append(files, publishedFile{path: p, serve: "at " + id.Agent + " (Content-Type application/http-message-signatures-directory+json)",
			body: append(id.Directory, '\n')})
	}
	return files, nil
}

// cardName is the file name of the Signature Agent Card of user ("" for
// the configured identity).
func cardName(user string) string {
	if user == "" {
		return "signature-agent-card.json"
	}
	safe := strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, user)
	return "signature-agent-card-" + strings.TrimLeft(safe, ".") + ".json"
}

// directoryPath is where publish writes the key directory served at the
// Signature-Agent URL agent: <host>/<path>, never outside DIR.
func directoryPath(agent string) (string, error) {
	u, err := url.Parse(agent)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("signature agent %q is not an absolute URL", agent)
	}
	host := strings.NewReplacer(":", "_", "/", "_", "\\", "_").Replace(u.Host)
	p := strings.TrimPrefix(path.Clean("/"+u.Path), "/")
	if p == "" {
		p = "index.json"
	}
	return host + "/" + p, nil
}

// agentCard is the Signature Agent Card (draft-meunier-webbotauth-registry)
// of id: its name, contacts, key directory, product token and purposes.
func agentCard(cfg config.Config, id signing.PublishedIdentity) ([]byte, error) {
	card := map[string]any{"client_name": crawlerName(cfg, id.Token), "jwks_uri": id.Agent}
	if cfg.Crawler.URL != "" {
		card["client_uri"] = cfg.Crawler.URL
	}
	if cfg.Crawler.Contact != "" {
		card["contacts"] = []string{cfg.Crawler.Contact}
	}
	if id.Token != "" {
		card["rfc9309-product-token"] = id.Token
	}
	if len(id.Purposes) > 0 {
		card["purpose"] = strings.Join(id.Purposes, ",")
	}
	b, err := json.MarshalIndent(card, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("signature agent card: %w", err)
	}
	return append(b, '\n'), nil
}

// crawlerName is crawler.name, else the product token, else a generic
// name.
func crawlerName(cfg config.Config, token string) string {
	switch {
	case cfg.Crawler.Name != "":
		return cfg.Crawler.Name
	case token != "":
		return token
	}
	return "robotsgate crawler"
}
