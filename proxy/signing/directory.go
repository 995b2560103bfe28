package signing

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/dunglas/httpsfv"
)

// The key directory (draft-ietf-webbotauth-httpsig-protocol-01 §5.5).
const (
	// DirectoryPath is the well-known path of the directory.
	DirectoryPath = "/.well-known/http-message-signatures-directory"
	// MediaType is the media type the directory is served with.
	MediaType = "application/http-message-signatures-directory+json"
	// DirectoryTag is the tag of a directory response signature.
	DirectoryTag = "http-message-signatures-directory"
)

// Lifetimes of a served directory: verifiers may cache it for
// [directoryMaxAge], and its signatures expire after [directoryTTL], well
// beyond that.
const (
	directoryMaxAge = time.Hour
	directoryTTL    = 24 * time.Hour
)

// Directory returns the JWK Set of the public keys of keys, each listed
// once (by keyid), in order: {"keys":[{"kty":"OKP","crv":"Ed25519",
// "kid":<thumbprint>,"x":...,"use":"sig"}]}.
func Directory(keys []*Key) ([]byte, error) {
	set := struct {
		Keys []jwk `json:"keys"`
	}{Keys: []jwk{}}
	for _, k := range uniqueKeys(keys) {
		set.Keys = append(set.Keys, k.publicJWK())
	}
	b, err := json.Marshal(set)
	if err != nil {
		return nil, fmt.Errorf("signing: directory: %w", err)
	}
	return b, nil
}

// uniqueKeys returns keys without nils and without a second key of the
// same keyid (the first, preferring a private one, is kept).
func uniqueKeys(keys []*Key) []*Key {
	out := make([]*Key, 0, len(keys))
	at := map[string]int{}
	for _, k := range keys {
		if k == nil {
			continue
		}
		if i, ok := at[k.id]; ok {
			if out[i].priv == nil {
				out[i] = k
			}
			continue
		}
		at[k.id] = len(out)
		out = append(out, k)
	}
	return out
}

// SignDirectory sets on h the Content-Digest of body and one response
// signature (draft Appendix B) per private key of keys: covering
// ("@authority";req "content-digest"), created now, expiring ttl later,
// tag "http-message-signatures-directory". authority is the @authority of
// the request the directory answers. Labels are "binding", "binding2", ...
func SignDirectory(h http.Header, authority string, body []byte, keys []*Key, now time.Time, ttl time.Duration) error {
	sum := sha256.Sum256(body)
	d := httpsfv.NewDictionary()
	d.Add("sha-256", httpsfv.NewItem(sum[:]))
	digest, err := httpsfv.Marshal(d)
	if err != nil {
		return fmt.Errorf("signing: Content-Digest: %w", err)
	}
	h.Set("Content-Digest", digest)
	n := 0
	for _, k := range uniqueKeys(keys) {
		if k.priv == nil {
			continue
		}
		n++
		label := "binding"
		if n > 1 {
			label += strconv.Itoa(n)
		}
		sg := &signature{label: label}
		sg.add(component{name: "@authority", req: true}, authority)
		sg.add(component{name: "content-digest"}, digest)
		p := httpsfv.NewParams()
		p.Add("created", now.Unix())
		p.Add("expires", now.Add(ttl).Unix())
		p.Add("keyid", k.id)
		p.Add("tag", DirectoryTag)
		sg.params = p
		f, _, err := sg.sign(k.priv)
		if err != nil {
			return fmt.Errorf("signing: directory signature: %w", err)
		}
		h.Add("Signature-Input", f.input)
		h.Add("Signature", f.signature)
	}
	return nil
}

// DirectoryHandler serves at GET and HEAD the directory of the keys that
// keys returns for the authority the request names (its Host, as https;
// none: 404, signing is off), signed with each private key for that
// authority.
func DirectoryHandler(keys func(authority string) []*Key, now func() time.Time) http.Handler {
	if now == nil {
		now = time.Now
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		auth, err := authority("https", r.Host)
		var ks []*Key
		if err == nil {
			ks = keys(auth)
		}
		if err == nil && len(ks) == 0 {
			http.Error(w, "robotsgate: request signing is off (no signing.key): no key directory", http.StatusNotFound)
			return
		}
		var body []byte
		if err == nil {
			body, err = Directory(ks)
		}
		if err == nil {
			err = SignDirectory(w.Header(), auth, body, ks, now(), directoryTTL)
		}
		if err != nil {
			for _, f := range []string{"Content-Digest", "Signature-Input", "Signature"} {
				w.Header().Del(f)
			}
			http.Error(w, "robotsgate: "+strings.ReplaceAll(err.Error(), "\n", " "), http.StatusBadRequest)
			return
		}
		h := w.Header()
		h.Set("Content-Type", MediaType)
		h.Set("Cache-Control", "max-age="+strconv.Itoa(int(directoryMaxAge/time.Second)))
		h.Set("Access-Control-Allow-Origin", "*")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(http.StatusOK)
		if r.Method == http.MethodGet {
			_, _ = w.Write(body)
		}
	})
}
