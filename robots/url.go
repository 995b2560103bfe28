package robots

import "strings"

// PathParamsQuery returns the part of rawURL that robots.txt rules match:
// path, params and query, without scheme, authority and fragment; "/"
// when there is no path. It follows Google's GetPathParamsQuery: rawURL
// need not be absolute ("example.com/a" gives "/a"), a leading "//"
// starts an authority, and a result that would begin with "?" or ";"
// gets a "/" prepended. The URL is neither decoded nor re-encoded.
func PathParamsQuery(rawURL string) string {
	p, slash := pathParamsQuery(rawURL)
	if slash {
		return "/" + p
	}
	return p
}

// pathParamsQuery is [PathParamsQuery] without the allocation: it returns a
// substring of rawURL and whether a "/" must be prepended to it.
func pathParamsQuery(u string) (string, bool) {
	start := 0
	if len(u) >= 2 && u[0] == '/' && u[1] == '/' {
		start = 2
	}
	early := indexPathStart(u, start)
	protoEnd := indexFrom(u, "://", start)
	if early >= 0 && (protoEnd < 0 || early < protoEnd) {
		protoEnd = -1
	}
	if protoEnd < 0 {
		protoEnd = start
	} else {
		protoEnd += 3
	}
	pathStart := indexPathStart(u, protoEnd)
	if pathStart < 0 {
		return "/", false
	}
	hash := indexFrom(u, "#", start)
	if hash >= 0 && hash < pathStart {
		return "/", false
	}
	end := len(u)
	if hash >= 0 {
		end = hash
	}
	p := u[pathStart:end]
	return p, p[0] != '/'
}

// indexPathStart returns the index of the first '/', '?' or ';' in s at or
// after from, or -1.
func indexPathStart(s string, from int) int {
	for i := from; i < len(s); i++ {
		if c := s[i]; c == '/' || c == '?' || c == ';' {
			return i
		}
	}
	return -1
}

func indexFrom(s, sub string, from int) int {
	if from > len(s) {
		return -1
	}
	i := strings.Index(s[from:], sub)
	if i < 0 {
		return -1
	}
	return from + i
}
