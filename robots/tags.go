package robots

import "io"

// Directive is one robot-tag directive, from an X-Robots-Tag header or a
// <meta name="robots"> element.
type Directive struct {
	// Agent is the agent the directive is restricted to (lower case), or ""
	// when it applies to every agent.
	Agent string
	// Name is the directive's name in lower case, e.g. "noindex", "none",
	// "max-snippet" or "unavailable_after".
	Name string
	// Value is the text after "name:" for directives that carry one
	// ("max-snippet: 20"), else "".
	Value string
}

// ParseXRobotsTag parses the values of every X-Robots-Tag header of a
// response (http.Header.Values("X-Robots-Tag")).
func ParseXRobotsTag(values []string) []Directive { panic("TODO(tags)") }

// ParseMetaRobots reads an HTML document from r and returns the directives
// of its <meta name="robots"> and <meta name="AGENT"> elements inside
// <head>. It stops reading at the end of the head (or at <body>); the
// caller bounds how much of r may be read.
func ParseMetaRobots(r io.Reader) ([]Directive, error) { panic("TODO(tags)") }

// ForAgent returns the directives of ds that apply to the crawler whose
// product token is agent: those without an agent and those naming agent
// (case-insensitively). "none" is expanded to "noindex" and "nofollow".
func ForAgent(ds []Directive, agent string) []Directive { panic("TODO(tags)") }
