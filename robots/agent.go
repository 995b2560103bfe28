package robots

// isTokenChar reports whether c may appear in a product token. RFC 9309
// §2.2.1 allows only [A-Za-z_-]; robotsgate also accepts digits so that
// agents such as "MJ12bot" or "360Spider" keep their whole name (Google's
// parser cuts "MJ12bot" to "MJ", so the group written for MJ12bot would
// never apply to it).
func isTokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-'
}

// ProductToken returns the product token of a User-Agent header value: its
// leading run of [A-Za-z0-9_-], e.g. "MyBot" for "MyBot/2.1 (+https://x)"
// and "MJ12bot" for "MJ12bot/v1.4.8". It is the same rule Parse applies to
// the value of a user-agent line, so the result can be passed to Decide.
// Digits are accepted in addition to RFC 9309's [A-Za-z_-]; see the README
// section on deviations.
func ProductToken(userAgent string) string {
	i := 0
	for i < len(userAgent) && isTokenChar(userAgent[i]) {
		i++
	}
	return userAgent[:i]
}

// ValidAgent reports whether agent is a product token in the strict form
// of RFC 9309 §2.2.1: non-empty and made only of [A-Za-z_-]. It is
// stricter than the rest of the package: ProductToken, Parse and Decide
// also accept digits ("MJ12bot"), so an agent for which ValidAgent is
// false may still be selected by its own group.
func ValidAgent(agent string) bool {
	if agent == "" {
		return false
	}
	for i := 0; i < len(agent); i++ {
		c := agent[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// isGlobalAgent reports whether the value of a user-agent line names the
// default group: "*" alone or followed by whitespace (as Google accepts).
func isGlobalAgent(v string) bool {
	return len(v) > 0 && v[0] == '*' && (len(v) == 1 || isSpace(v[1]))
}

// maxStackAgent is the longest agent lookup does without allocating.
const maxStackAgent = 64

// lookup returns the group that applies to agent and the token it was
// selected by ("*" for the default group). It does not allocate for an
// agent of up to maxStackAgent bytes.
func (r *Robots) lookup(agent string) (*merged, string) {
	if r == nil {
		return nil, ""
	}
	if agent != "" && len(r.byAgent) > 0 {
		if len(agent) <= maxStackAgent {
			var buf [maxStackAgent]byte
			for i := 0; i < len(agent); i++ {
				c := agent[i]
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				buf[i] = c
			}
			if e, ok := r.byAgent[string(buf[:len(agent)])]; ok {
				return e.group, e.token
			}
		} else if e, ok := r.byAgent[asciiLower(agent)]; ok {
			return e.group, e.token
		}
	}
	if r.global != nil {
		return r.global, "*"
	}
	return nil, ""
}

// asciiLower returns s with ASCII upper-case letters mapped to lower case
// (unlike strings.ToLower, which also folds some non-ASCII letters such as
// the Kelvin sign to ASCII ones).
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
