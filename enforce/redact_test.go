package enforce

import "testing"

func TestRedactURLsIn(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`Get "http://user:secret@h.test/robots.txt": dial tcp: refused`, `Get "http://h.test/robots.txt": dial tcp: refused`},
		{`Get "https://TOKEN@h.test:8443/a?b=c@d": EOF`, `Get "https://h.test:8443/a?b=c@d": EOF`},
		{`http://u:***@h.test`, `http://h.test`},
		{`a http://u@x and ws://v:w@y/z`, `a http://x and ws://y/z`},
		{`http://a:b@c@d/e`, `http://d/e`}, // the last @ ends the userinfo
		{`mailto:x@y.test, http://h.test/@x`, `mailto:x@y.test, http://h.test/@x`},
		{`no url here`, `no url here`},
		{`://@`, `://`},
		{`http://`, `http://`},
	} {
		if got := RedactURLsIn(tc.in); got != tc.want {
			t.Errorf("RedactURLsIn(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
