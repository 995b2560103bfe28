package enforce

import (
	"net/netip"
	"strings"

	"github.com/robotsgate/robotsgate/robots/tdmrep"
)

// Store keys. Every policy document the Enforcer caches (an origin's
// robots.txt or tdmrep.json, an RSL license document) is named by a [Key]:
// the kind of document ([Doc]), the origin it is for, the address it is
// fetched from (see address.go) and, for a license document, its URL. The
// kind is never recovered from the key's string form: that form
// ([Key.String]) exists for the Stores alone, which keep entries under it
// (the Redis layout, docs/redis.md, is made of it).

// Doc is the kind of policy document a [Key] names.
type Doc uint8

const (
	// DocRobots is an origin's /robots.txt.
	DocRobots Doc = iota
	// DocTDMRep is an origin's /.well-known/tdmrep.json.
	DocTDMRep
	// DocLicense is an RSL license document, named by its URL.
	DocLicense
)

// String names the document kind in logs and messages.
func (d Doc) String() string {
	switch d {
	case DocTDMRep:
		return "tdmrep.json"
	case DocLicense:
		return "license document"
	}
	return "robots.txt"
}

// Key names one cached policy document. Its zero value is the robots.txt
// key of the empty origin; keys are made by [RobotsKey], [TDMKey] and
// [LicenseKey], and are comparable.
type Key struct {
	doc Doc
	// origin is the canonical origin the document is for; for a license
	// document, the origin of its URL ("" when it has none).
	origin string
	// addr is the address the document is fetched from (and the copy
	// served there); the zero Addr means wherever the name resolves.
	addr netip.Addr
	// url is a license document's URL (absolute, without fragment);
	// "" for the other kinds.
	url string
}

// keySep separates the address from the rest of a key's string form: it
// never appears in an origin (scheme, canonical host, port).
const keySep = "|"

// licenseSuffix ends a license document's URL in a key's string form;
// license URLs have no fragment, so no other key's form holds it.
const licenseSuffix = "#rsl-license"

// RobotsKey is the key of origin's robots.txt as served at addr. addr is
// dropped when it is not valid or is the origin's own host (an IP literal
// names its address already).
func RobotsKey(origin string, addr netip.Addr) Key {
	return Key{doc: DocRobots, origin: origin, addr: addrFor(origin, addr)}
}

// TDMKey is the key of origin's tdmrep.json as served at addr (dropped as
// by [RobotsKey]).
func TDMKey(origin string, addr netip.Addr) Key {
	return Key{doc: DocTDMRep, origin: origin, addr: addrFor(origin, addr)}
}

// LicenseKey is the key of the license document at u (an absolute URL
// without fragment, as robots keeps a License line), fetched wherever its
// name resolves.
func LicenseKey(u string) Key {
	o, _ := canonicalOrigin(u)
	return Key{doc: DocLicense, origin: o, url: u}
}

// licenseKeyAt is the key of the license document lu for a request to
// origin sent to addr: a document on origin itself is read as served at
// addr, as its robots.txt is (address.go); one on another host is fetched
// wherever its name resolves.
func licenseKeyAt(lu, origin string, addr netip.Addr) Key {
	k := LicenseKey(lu)
	if k.origin == origin && k.origin != "" {
		k.addr = addrFor(origin, addr)
	}
	return k
}

// addrFor returns addr as a key of origin holds it: unmapped and without
// zone, or the zero Addr when it is not valid or is origin's own host.
func addrFor(origin string, addr netip.Addr) netip.Addr {
	if !addr.IsValid() {
		return netip.Addr{}
	}
	a := addr.Unmap().WithZone("")
	if ip, err := netip.ParseAddr(literalHost(origin)); err == nil && ip.Unmap().WithZone("") == a {
		return netip.Addr{}
	}
	return a
}

// Doc returns the kind of document k names.
func (k Key) Doc() Doc { return k.doc }

// Origin returns the origin k is for: the canonical origin of a robots.txt
// or tdmrep.json, that of a license document's URL ("" when it has none).
func (k Key) Origin() string { return k.origin }

// Addr returns the address the document is fetched from, the zero Addr
// when it is fetched wherever its name resolves.
func (k Key) Addr() netip.Addr { return k.addr }

// URL returns the URL of the document k names.
func (k Key) URL() string {
	switch k.doc {
	case DocTDMRep:
		return k.origin + tdmrep.WellKnownPath
	case DocLicense:
		return k.url
	}
	return k.origin + "/robots.txt"
}

// String returns the form Stores keep k under, which the Redis layout
// (docs/redis.md) is made of and must not change:
//
//	robots.txt        <origin>[|<address>]
//	tdmrep.json       <origin>[|<address>]/.well-known/tdmrep.json
//	license document  <url>#rsl-license[|<address>]
//
// It allocates only when it adds to the origin.
func (k Key) String() string {
	if k.doc == DocRobots && !k.addr.IsValid() {
		return k.origin
	}
	var b strings.Builder
	b.Grow(len(k.origin) + len(k.url) + len(licenseSuffix) + len(tdmrep.WellKnownPath) + len(keySep) + 39)
	switch k.doc {
	case DocLicense:
		b.WriteString(k.url)
		b.WriteString(licenseSuffix)
	default:
		b.WriteString(k.origin)
	}
	if k.addr.IsValid() {
		b.WriteString(keySep)
		var a [39]byte
		b.Write(k.addr.AppendTo(a[:0]))
	}
	if k.doc == DocTDMRep {
		b.WriteString(tdmrep.WellKnownPath)
	}
	return b.String()
}

// literalHost returns the host of a canonical origin when it may be an
// IP literal (brackets dropped), "" otherwise; it allocates nothing.
func literalHost(origin string) string {
	i := strings.Index(origin, "://")
	if i < 0 {
		return ""
	}
	h := origin[i+3:]
	if strings.HasPrefix(h, "[") {
		if j := strings.IndexByte(h, ']'); j > 0 {
			return h[1:j]
		}
		return ""
	}
	if j := strings.LastIndexByte(h, ':'); j >= 0 {
		h = h[:j]
	}
	if h == "" || h[len(h)-1] < '0' || h[len(h)-1] > '9' {
		return "" // a name: its last label is not a number
	}
	return h
}
