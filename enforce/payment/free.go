package payment

import (
	"net/url"
	"path"
	"strings"
)

// freePaths are the paths the contract serves free of charge, lower-cased.
var freePaths = map[string]bool{
	"/robots.txt":               true,
	"/sitemap.xml":              true,
	"/security.txt":             true,
	"/.well-known/security.txt": true,
	"/crawlers.json":            true,
}

// isFree reports whether the request target (a path, optionally
// percent-encoded and followed by "?query" or "#fragment"; or an
// absolute URL) names one of the always-free paths, to which no price
// header is ever sent. It errs towards "free": the path is
// percent-decoded, compared without regard to case, and cleaned of
// repeated slashes, dot segments and a trailing slash, so that every
// spelling an origin might serve as the free file counts as free. A
// path whose percent-encoding is invalid is decoded no further.
func isFree(target string) bool {
	if i := strings.IndexAny(target, "?#"); i >= 0 {
		target = target[:i]
	}
	if _, rest, ok := strings.Cut(target, "://"); ok { // an absolute URL: keep its path
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return false
		}
		target = rest[i:]
	}
	p := target
	for range 3 { // "%252F" decoded twice still counts; bounded
		d, err := url.PathUnescape(p)
		if err != nil || d == p {
			break
		}
		p = d
	}
	if p == "" || p[0] != '/' {
		p = "/" + p
	}
	p = path.Clean(strings.ReplaceAll(p, `\`, "/"))
	return freePaths[strings.ToLower(p)]
}

// FreeURL reports whether u's path is one of the free paths ([isFree]).
func FreeURL(u *url.URL) bool {
	if u == nil {
		return false
	}
	return isFree(u.EscapedPath())
}
