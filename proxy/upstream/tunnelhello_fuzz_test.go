package upstream

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"strconv"
	"testing"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/proxy/transparent"
)

// chunkReader returns data n bytes per Read (at least one), as a client
// that sends its ClientHello in small TCP segments would.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := min(len(p), max(c.n, 1), len(c.data))
	copy(p, c.data[:n])
	c.data = c.data[n:]
	return n, nil
}

// FuzzTunnelHello: whatever a client sends inside a tunnel, in whatever
// segments, the check of its ClientHello does not crash or read past its
// bound, sends on exactly the bytes it read, and lets through only a
// ClientHello record naming the CONNECT target (none only for an IP
// literal) without ECH, which the same bytes alone read again the same.
func FuzzTunnelHello(f *testing.F) {
	f.Add([]byte("\x16\x03\x01\x00\x40\x01GET /private HTTP/1.1\r\n\r\n"), "localhost:443", 7)
	f.Add([]byte("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n"), "localhost:443", 1)
	f.Fuzz(func(t *testing.T, data []byte, target string, chunk int) {
		hc := examineHello(&chunkReader{data: data, n: chunk % 4096}, target)
		if !bytes.HasPrefix(data, hc.First) || len(hc.First) > 64<<10 {
			t.Fatalf("sends on %d bytes that are not the %d bytes read", len(hc.First), len(data))
		}
		switch hc.Refused {
		case HelloOK:
		case HelloNotTLS, HelloServerName, HelloECH:
			return
		default:
			t.Fatalf("refusal %d", hc.Refused)
		}
		if len(hc.First) < 6 || hc.First[0] != 22 || hc.First[1] != 3 || hc.First[5] != 1 {
			t.Fatalf("let through %q, which does not begin a ClientHello record", hc.First)
		}
		h, again, err := transparent.ReadHello(bytes.NewReader(hc.First))
		if err != nil || !bytes.Equal(again, hc.First) || h.ECH {
			t.Fatalf("the bytes sent on read again: %+v, %v", h, err)
		}
		host, _, err := net.SplitHostPort(target)
		if err != nil {
			host = target
		}
		want, _ := enforce.CanonicalHost(host)
		if got, _ := enforce.CanonicalHost(h.ServerName); h.ServerName != "" && got != want || h.ServerName == "" && !isIPLiteral(want) {
			t.Fatalf("let through a ClientHello for %q in a tunnel to %q", h.ServerName, target)
		}
	})
}

// clientHello returns the first record a crypto/tls client sends with cfg.
func clientHello(t testing.TB, cfg *tls.Config) []byte {
	t.Helper()
	a, b := net.Pipe()
	defer b.Close()
	go func() {
		_ = tls.Client(a, cfg).Handshake()
		a.Close()
	}()
	rec := make([]byte, 5)
	if _, err := io.ReadFull(b, rec); err != nil {
		t.Fatal(err)
	}
	body := make([]byte, int(rec[3])<<8|int(rec[4]))
	if _, err := io.ReadFull(b, body); err != nil {
		t.Fatal(err)
	}
	return append(rec, body...)
}

// fragmented is the handshake message of the record rec split into
// records of n bytes.
func fragmented(rec []byte, n int) []byte {
	var out []byte
	for msg := rec[5:]; len(msg) > 0; msg = msg[min(n, len(msg)):] {
		k := min(n, len(msg))
		out = append(append(out, 22, 3, 1, byte(k>>8), byte(k)), msg[:k]...)
	}
	return out
}

// TestExamineHello: the check of a tunnel's ClientHello puts the hello
// together from records and reads of any size, sends on every byte read,
// and decides on the server name as the table of docs/https.md says.
func TestExamineHello(t *testing.T) {
	named := clientHello(t, &tls.Config{ServerName: "open.test"})
	none := clientHello(t, &tls.Config{InsecureSkipVerify: true})
	for _, tt := range []struct {
		name   string
		data   []byte
		target string
		chunk  int
		want   HelloRefusal
	}{
		{"whole", named, "open.test:443", 4096, HelloOK},
		{"one byte per read", named, "OPEN.test.:443", 1, HelloOK},
		{"one byte per record", fragmented(named, 1), "open.test:443", 4096, HelloOK},
		{"followed by more", append(bytes.Clone(named), "more"...), "open.test:443", 4096, HelloOK},
		{"another name", named, "closed.test:443", 4096, HelloServerName},
		{"no name, IP literal", none, "127.0.0.1:443", 4096, HelloOK},
		{"no name, IPv6 literal", none, "[::1]:443", 4096, HelloOK},
		{"no name, name", none, "open.test:443", 4096, HelloServerName},
		{"truncated", named[:len(named)-1], "open.test:443", 4096, HelloNotTLS},
		{"fake header", []byte("\x16\x03\x01\x00\x40\x01GET /private HTTP/1.1\r\n\r\n"), "open.test:443", 4096, HelloNotTLS},
	} {
		hc := examineHello(&chunkReader{data: tt.data, n: tt.chunk}, tt.target)
		if hc.Refused != tt.want {
			t.Errorf("%s: refusal %d (%s), want %d", tt.name, hc.Refused, hc.Detail, tt.want)
		}
		if tt.want == HelloOK && !bytes.Equal(hc.First, tt.data[:len(hc.First)]) || len(hc.First) < len(tt.data)-4 {
			t.Errorf("%s: sends on %d of %d bytes", tt.name, len(hc.First), len(tt.data))
		}
	}
}

// BenchmarkExamineHello: the cost of reading and checking one
// ClientHello of Go's client, whole and in 7-byte reads.
func BenchmarkExamineHello(b *testing.B) {
	named := clientHello(b, &tls.Config{ServerName: "open.test"})
	for _, chunk := range []int{4096, 7} {
		b.Run("read="+strconv.Itoa(chunk), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if hc := examineHello(&chunkReader{data: named, n: chunk}, "open.test:443"); hc.Refused != HelloOK {
					b.Fatal(hc.Detail)
				}
			}
		})
	}
}
