package enforce

import (
	"net/url"
	"testing"
)

func TestOrigin(t *testing.T) {
	tests := []struct {
		in      string
		want    string
		wantErr bool
	}{
		{"http://example.com/a/b?c=d#e", "http://example.com", false},
		{"HTTP://Example.COM/Path", "http://example.com", false},
		{"http://example.com:80/x", "http://example.com", false},
		{"https://example.com:443/x", "https://example.com", false},
		{"http://example.com:443/x", "http://example.com:443", false},
		{"https://example.com:80/x", "https://example.com:80", false},
		{"http://example.com:8080/x", "http://example.com:8080", false},
		{"http://example.com:0080/x", "http://example.com", false},
		{"http://example.com:08080/x", "http://example.com:8080", false},
		{"http://user:pw@example.com/x", "http://example.com", false},
		{"http://127.0.0.1:8080/", "http://127.0.0.1:8080", false},
		{"http://[::1]:8080/x", "http://[::1]:8080", false},
		{"http://[::1]/x", "http://[::1]", false},
		{"https://[2001:DB8::1]:443/", "https://[2001:db8::1]", false},
		{"http://[fe80::1%25en0]:8080/", "http://[fe80::1%25en0]:8080", false},
		{"http://example.com", "http://example.com", false},
		{"http://example.com:/x", "http://example.com", false},
		{"/relative/path", "", true},
		{"//example.com/x", "", true},
		{"http:///x", "", true},
		{"mailto:someone@example.com", "", true},
		{"http://example.com:99999/", "", true},
		{"http://example.com:123456/", "", true},
	}
	for _, tt := range tests {
		u, err := url.Parse(tt.in)
		if err != nil {
			t.Fatalf("url.Parse(%q): %v", tt.in, err)
		}
		got, err := Origin(u)
		if (err != nil) != tt.wantErr {
			t.Errorf("Origin(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if got != tt.want {
			t.Errorf("Origin(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if _, err := Origin(nil); err == nil {
		t.Error("Origin(nil) succeeded")
	}
	// A URL built by hand with an upper-case scheme and an invalid port.
	if got, err := Origin(&url.URL{Scheme: "HTTPS", Host: "A.example:443"}); err != nil || got != "https://a.example" {
		t.Errorf("Origin(HTTPS://A.example:443) = %q, %v", got, err)
	}
	if _, err := Origin(&url.URL{Scheme: "http", Host: "a.example:8x"}); err == nil {
		t.Error("Origin with port 8x succeeded")
	}
}
