package robots

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"reflect"
	"testing"
)

// helperCases mirrors testdata/google_robotstxt_helpers.json.
type helperCases struct {
	PathParamsQuery struct {
		Cases []struct {
			Name, Input, Expected string
		}
	} `json:"path_params_query"`
	EscapePattern struct {
		Cases []struct {
			Name, Input, Expected string
		}
	} `json:"escape_pattern"`
	ValidUserAgent struct {
		Cases []struct {
			Name     string
			Input    *string
			Expected bool
		}
	} `json:"valid_user_agent_to_obey"`
	ParseStats struct {
		Cases []struct {
			Name                      string
			Robots                    *string
			RobotsBase64              string `json:"robots_base64"`
			ExpectedDirectives        int    `json:"expected_directives"`
			ExpectedLastDirectiveLine *int   `json:"expected_last_directive_line"`
			ExpectedUnknown           *int   `json:"expected_unknown"`
		}
	} `json:"parse_stats"`
	Sitemaps struct {
		Cases []struct {
			Name             string
			Robots           string
			ExpectedSitemaps []string `json:"expected_sitemaps"`
		}
	}
}

func loadHelpers(t *testing.T) helperCases {
	t.Helper()
	b, err := os.ReadFile("testdata/google_robotstxt_helpers.json")
	if err != nil {
		t.Fatal(err)
	}
	var h helperCases
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.PathParamsQuery.Cases) == 0 || len(h.EscapePattern.Cases) == 0 || len(h.ValidUserAgent.Cases) == 0 ||
		len(h.ParseStats.Cases) == 0 || len(h.Sitemaps.Cases) == 0 {
		t.Fatal("a section of google_robotstxt_helpers.json is missing")
	}
	return h
}

func TestHelpersPathParamsQuery(t *testing.T) {
	for _, c := range loadHelpers(t).PathParamsQuery.Cases {
		if got := PathParamsQuery(c.Input); got != c.Expected {
			t.Errorf("%s: PathParamsQuery(%q) = %q, want %q", c.Name, c.Input, got, c.Expected)
		}
	}
}

func TestHelpersValidAgent(t *testing.T) {
	for _, c := range loadHelpers(t).ValidUserAgent.Cases {
		in := ""
		if c.Input != nil {
			in = *c.Input
		}
		if got := ValidAgent(in); got != c.Expected {
			t.Errorf("%s: ValidAgent(%q) = %v, want %v", c.Name, in, got, c.Expected)
		}
	}
}

func TestHelpersParseStats(t *testing.T) {
	for _, c := range loadHelpers(t).ParseStats.Cases {
		var body []byte
		if c.Robots != nil {
			body = []byte(*c.Robots)
		} else {
			var err error
			if body, err = base64.StdEncoding.DecodeString(c.RobotsBase64); err != nil {
				t.Fatal(err)
			}
		}
		r := Parse(body)
		if r.stats.directives != c.ExpectedDirectives {
			t.Errorf("%s: %d directives, want %d", c.Name, r.stats.directives, c.ExpectedDirectives)
		}
		if c.ExpectedLastDirectiveLine != nil && r.stats.lastDirective != *c.ExpectedLastDirectiveLine {
			t.Errorf("%s: last directive on line %d, want %d", c.Name, r.stats.lastDirective, *c.ExpectedLastDirectiveLine)
		}
		if c.ExpectedUnknown != nil {
			if r.stats.unknown != *c.ExpectedUnknown || len(r.Extensions()) != *c.ExpectedUnknown {
				t.Errorf("%s: %d unknown lines, %d extensions, want %d", c.Name, r.stats.unknown, len(r.Extensions()), *c.ExpectedUnknown)
			}
		}
	}
}

func TestHelpersSitemaps(t *testing.T) {
	for _, c := range loadHelpers(t).Sitemaps.Cases {
		if got := Parse([]byte(c.Robots)).Sitemaps(); !reflect.DeepEqual(got, c.ExpectedSitemaps) {
			t.Errorf("%s: Sitemaps() = %q, want %q", c.Name, got, c.ExpectedSitemaps)
		}
	}
}

// parseCompiled is Parse with every group compiled, as files too large
// for the compact form are: the tests of the compiled form's filters and
// indexes use it, and the differential tests compare it with Parse.
func parseCompiled(body []byte) *Robots { return parseMode(cutAtLineEnd(body, DefaultMaxBytes), true) }
