package answer

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
)

// declaredReasons returns every reason the module's non-test code
// declares, with where: the values of constants of type Reason (package
// enforce) or enforce.Reason (elsewhere), and of conversions to them.
func declaredReasons(t *testing.T) map[string]string {
	t.Helper()
	isReason := func(e ast.Expr) bool {
		switch x := e.(type) {
		case *ast.Ident:
			return x.Name == "Reason"
		case *ast.SelectorExpr:
			id, ok := x.X.(*ast.Ident)
			return ok && id.Name == "enforce" && x.Sel.Name == "Reason"
		}
		return false
	}
	found := make(map[string]string)
	add := func(fset *token.FileSet, lit ast.Expr) {
		if bl, ok := lit.(*ast.BasicLit); ok && bl.Kind == token.STRING {
			v, _ := strconv.Unquote(bl.Value)
			found[v] = fset.Position(bl.Pos()).String()
		}
	}
	fset := token.NewFileSet()
	err := filepath.WalkDir("../..", func(path string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.ValueSpec:
				if x.Type != nil && isReason(x.Type) {
					for _, v := range x.Values {
						add(fset, v)
					}
				}
			case *ast.CallExpr:
				if isReason(x.Fun) && len(x.Args) == 1 {
					add(fset, x.Args[0])
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestReasonsTableComplete: every reason any package declares has a row
// in the table of reasons, every row is a declared reason, once, and
// every refusing row says what its refusal answers.
func TestReasonsTableComplete(t *testing.T) {
	declared := declaredReasons(t)
	if len(declared) < 20 {
		t.Fatalf("found only %d declared reasons: the scan is broken", len(declared))
	}
	rows := make(map[enforce.Reason]bool)
	for _, row := range reasons {
		if rows[row.reason] {
			t.Errorf("reason %s has two rows", row.reason)
		}
		rows[row.reason] = true
		if _, ok := declared[string(row.reason)]; !ok {
			t.Errorf("row %s names no declared reason", row.reason)
		}
		if !row.allows && (row.status < 400 || row.status > 599) {
			t.Errorf("refusing reason %s has status %d", row.reason, row.status)
		}
		if !row.allows && row.proxyStatus == "" && row.timeoutStatus == 0 {
			t.Errorf("refusing reason %s has no Proxy-Status error type", row.reason)
		}
	}
	for r, where := range declared {
		if !rows[enforce.Reason(r)] {
			t.Errorf("reason %q (%s) has no row in the table of reasons (proxy/answer/reasons.go)", r, where)
		}
	}
}

// TestReasonsExplained: every reason's explanation is a sentence, not the
// reason again; before the table, a 414 said "url-too-long: url-too-long".
func TestReasonsExplained(t *testing.T) {
	for _, row := range reasons {
		if e := explain(enforce.Decision{Reason: row.reason}); e == string(row.reason) || len(strings.Fields(e)) < 5 {
			t.Errorf("explanation of %s: %q, want a sentence", row.reason, e)
		}
	}
	body := refusalText(newRefusalBody(http.StatusRequestURITooLong, enforce.Decision{Reason: ReasonURLTooLong}, "http://x/"))
	if strings.Contains(body, "url-too-long: url-too-long") || !strings.Contains(body, "url-too-long: the URL is longer than max_url_bytes") {
		t.Errorf("414 body:\n%s", body)
	}
}

// TestReasonsStatus: the status of each refusal is its row's; a timeout
// picks the timeout status where the row has one.
func TestReasonsStatus(t *testing.T) {
	for _, c := range []struct {
		d    enforce.Decision
		want int
	}{
		{enforce.Decision{Reason: enforce.ReasonDisallowed}, http.StatusForbidden},
		{enforce.Decision{Reason: enforce.ReasonDisallowed, RobotsErrKind: enforce.FetchTimeout}, http.StatusForbidden},
		{enforce.Decision{Reason: enforce.ReasonOriginUnreachable, RobotsErrKind: enforce.FetchDNS}, http.StatusBadGateway},
		{enforce.Decision{Reason: enforce.ReasonOriginUnreachable, RobotsErrKind: enforce.FetchTimeout}, http.StatusGatewayTimeout},
		{enforce.Decision{Reason: ReasonURLTooLong}, http.StatusRequestURITooLong},
		{enforce.Decision{Reason: ReasonMisdirected}, http.StatusMisdirectedRequest},
		{enforce.Decision{Reason: "no-such-reason"}, http.StatusForbidden},
	} {
		if got := Status(c.d); got != c.want {
			t.Errorf("Status(%s, %v) = %d, want %d", c.d.Reason, c.d.RobotsErrKind, got, c.want)
		}
	}
}

// reasonsMarkdown is the reason table of docs/decisions.md, written from
// the table of reasons.
func reasonsMarkdown() string {
	var sb strings.Builder
	sb.WriteString("| reason | decision | status | Proxy-Status error | audited | why |\n")
	sb.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, row := range reasons {
		decision, status, ps := "allowed", "-", "-"
		if !row.allows {
			decision, status, ps = "blocked", strconv.Itoa(row.status), row.proxyStatus
			if row.timeoutStatus != 0 {
				status += " (" + strconv.Itoa(row.timeoutStatus) + " on a timeout)"
			}
			if ps == "" {
				ps = "the failure's (`dns_error`, `connection_refused`, ...)"
			} else {
				ps = "`" + ps + "`"
			}
		}
		if row.audited == auditNever {
			decision = "none"
		}
		sb.WriteString("| `" + string(row.reason) + "` | " + decision + " | " + status + " | " + ps + " | " +
			row.audited.String() + " | " + row.explanation + " |\n")
	}
	return sb.String()
}

// TestReasonsDoc: the reason table of docs/decisions.md is the table of
// reasons. ROBOTSGATE_UPDATE_DOCS=1 rewrites it.
func TestReasonsDoc(t *testing.T) {
	const path, begin, end = "../../docs/decisions.md", "<!-- reasons table: begin (proxy/answer/reasons.go) -->\n", "<!-- reasons table: end -->\n"
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	i, j := strings.Index(doc, begin), strings.Index(doc, end)
	if i < 0 || j < i {
		t.Fatalf("%s has no %q ... %q section", path, begin, end)
	}
	want := reasonsMarkdown()
	if got := doc[i+len(begin) : j]; got != want {
		if os.Getenv("ROBOTSGATE_UPDATE_DOCS") == "1" {
			if err := os.WriteFile(path, []byte(doc[:i+len(begin)]+want+doc[j:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("the reason table of %s is not the table of reasons; run ROBOTSGATE_UPDATE_DOCS=1 go test ./proxy -run TestReasonsDoc. Want:\n%s", path, want)
	}
}
