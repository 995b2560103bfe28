package enforce

import (
	"crypto/sha256"
	"encoding/hex"
)

// What was in force. Each policy document fetched with a body (a
// robots.txt, tdmrep.json or license document) is hashed once, when it
// is fetched (or loaded from a Store that kept no hash): the hex SHA-256
// of the body as kept, at most robots.max_bytes, travels in the Entry
// ([FetchResult.SHA256]). Each decision names the hashes of the
// documents it used ([Decision.RobotsSHA256], [TDMVerdict.SHA256],
// [LicenseVerdict.SHA256]) and hands their bodies to [Documents], which
// keeps each distinct one.

// Documents keeps the bodies of the policy documents decisions used,
// by hash. Keep is called on the deciding goroutine for every use: it
// must be fast, must not block on disk and must not keep body beyond the
// call unless it copies it (bodies are shared by cached entries and
// never change).
type Documents interface {
	Keep(doc Doc, sha256 string, body []byte)
}

// hashBody sets r.SHA256 from r.Body when r is a good copy without one.
func hashBody(r *FetchResult) {
	if r == nil || r.Status != StatusOK || r.SHA256 != "" {
		return
	}
	sum := sha256.Sum256(r.Body)
	r.SHA256 = hex.EncodeToString(sum[:])
}

// inForce returns the result whose body is the document in force: the
// latest when it is a good copy, else the good copy kept while the
// document is unreachable; nil when there is none.
func (e *Entry) inForce() *FetchResult {
	switch {
	case e.Result.Status == StatusOK:
		return &e.Result
	case e.Result.Status == StatusUnreachable && e.Good != nil:
		return e.Good
	}
	return nil
}

// used hands the document in force of en to the Enforcer's Documents and
// returns its hash ("" when there is none).
func (e *Enforcer) used(en *Entry) string {
	r := en.inForce()
	if r == nil || r.SHA256 == "" {
		return ""
	}
	if e.docs != nil {
		e.docs.Keep(en.Key.Doc(), r.SHA256, r.Body)
	}
	return r.SHA256
}

// SHA256 returns the hash of e's document in force, "" when there is
// none.
func (e *Entry) SHA256() string {
	if r := e.inForce(); r != nil {
		return r.SHA256
	}
	return ""
}
