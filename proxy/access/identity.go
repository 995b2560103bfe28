package access

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// Identity is who a proxy user crawls as: the fields a line of the
// credentials file may add after "user:password". The zero Identity
// states nothing (the configured agent and purposes apply).
type Identity struct {
	User string // the user name of the credentials
	// Agent is the user's robots agent (product token); "" for the
	// configured one.
	Agent string
	// Purposes are the user's declared purposes, valid when HasPurposes;
	// they replace the configured ones ("purposes=none": the empty set).
	Purposes    aipref.Set
	HasPurposes bool
	// ContentUse is the user's declared content use, valid when
	// HasContentUse; it replaces the configured one.
	ContentUse    aipref.Use
	HasContentUse bool
	// License is the user's license.mode (off, report or enforce), ""
	// for the configured one.
	License string
	// SigningKey is the file of the user's Ed25519 key that signs its
	// requests, "" for signing.key; SignatureAgent the URL of its key
	// directory, "" for signing.agent (Web Bot Auth, proxy/signing).
	SigningKey, SignatureAgent string
	// Payment is the user's payment.mode (off, report or pay), "" for
	// the configured one; PaymentMaxPrice the user's payment.max_price,
	// zero for the configured one (docs/payment.md).
	Payment         string
	PaymentMaxPrice payment.Amount
}

// identityKey is the context key of the Identity Wrap attaches.
type identityKey struct{}

// IdentityFrom returns the Identity of the authenticated user that Wrap
// attached to ctx, and whether there is one.
func IdentityFrom(ctx context.Context) (Identity, bool) {
	id, ok := ctx.Value(identityKey{}).(Identity)
	return id, ok
}

// withIdentity returns ctx carrying id.
func withIdentity(ctx context.Context, id Identity) context.Context {
	return context.WithValue(ctx, identityKey{}, id)
}

// parseCredentialLine splits a (trimmed, non-empty) credentials file line
// into its credential and its Identity. The credential is "user:password"
// up to the first space or tab; after it come fields separated by spaces
// or tabs, each "agent=TOKEN", "purposes=LIST" (LIST as for -purpose,
// or "none"), "content_use=LEVEL" (as for -content-use) or
// "license=MODE" (as for -license), "signing_key=FILE",
// "signature_agent=URL", "payment=MODE" (as for -payment-mode) or
// "payment_max_price=CURRENCY:AMOUNT" (as for -payment-max-price, a colon
// for the space), each at most once. A password therefore cannot contain a
// space or a tab in this file. Errors never quote the password, nor a
// field's text (which is part of the password when a password with a
// space was meant).
func parseCredentialLine(line string) (cred string, id Identity, err error) {
	cred, rest, _ := strings.Cut(strings.ReplaceAll(line, "\t", " "), " ")
	user, _, _ := strings.Cut(cred, ":")
	id.User = user
	seen := map[string]bool{}
	for i, f := range strings.Fields(rest) {
		key, val, ok := strings.Cut(f, "=")
		switch {
		case !ok || key != "agent" && key != "purposes" && key != "content_use" && key != "license" && !signingField(key) && !paymentField(key):
			return "", Identity{}, fmt.Errorf("field %d after the credentials is not agent=TOKEN, purposes=LIST, content_use=LEVEL, license=MODE, "+
				"signing_key=FILE, signature_agent=URL, payment=MODE or payment_max_price=CURRENCY:AMOUNT "+
				"(a password in the credentials file cannot contain spaces or tabs)", i+1)
		case seen[key]:
			return "", Identity{}, fmt.Errorf("%s= given twice", key)
		}
		seen[key] = true
		if key == "agent" {
			if !robots.ValidAgent(val) {
				return "", Identity{}, errors.New("agent= is not a product token (letters, digits, '_' and '-' only, e.g. MyBot)")
			}
			if len(val) > robots.MaxAgentBytes {
				return "", Identity{}, fmt.Errorf("agent= is longer than %d bytes", robots.MaxAgentBytes)
			}
			id.Agent = val
			continue
		}
		if key == "license" {
			if val != "off" && val != "report" && val != "enforce" {
				return "", Identity{}, errors.New("license= is not a license mode: allowed values are off, report, enforce")
			}
			id.License = val
			continue
		}
		if signingField(key) || paymentField(key) {
			if err := id.setField(key, val); err != nil {
				return "", Identity{}, err
			}
			continue
		}
		if key == "content_use" {
			if id.ContentUse, err = aipref.ParseUse(val); err != nil || val == "" {
				return "", Identity{}, errors.New("content_use= is not a content use: allowed values are " + aipref.UseList)
			}
			id.HasContentUse = true
			continue
		}
		if id.Purposes, err = parseUserPurposes(val); err != nil {
			return "", Identity{}, err
		}
		id.HasPurposes = true
	}
	return cred, id, nil
}

// parseUserPurposes parses the value of a purposes= field.
func parseUserPurposes(val string) (aipref.Set, error) {
	if val == "none" {
		return 0, nil
	}
	if val == "" {
		return 0, errors.New("purposes= is empty (write purposes=none for no purposes)")
	}
	set, err := aipref.ParsePurposes([]string{val})
	if err != nil || set == 0 {
		return 0, errors.New("purposes= holds an unknown purpose: allowed values are " + aipref.PurposeList + ", or none")
	}
	return set, nil
}

// signingField reports whether key is a field of the user's Web Bot Auth
// identity.
func signingField(key string) bool { return key == "signing_key" || key == "signature_agent" }

// paymentField reports whether key is a field of the user's payment
// settings.
func paymentField(key string) bool { return key == "payment" || key == "payment_max_price" }

// setField sets the signing or payment field key of id to val.
func (id *Identity) setField(key, val string) error {
	switch key {
	case "payment":
		if !config.PaymentMode(val).Valid() {
			return errors.New("payment= is not a payment mode: allowed values are off, report, pay")
		}
		id.Payment = val
		return nil
	case "payment_max_price":
		a, err := payment.ParseAmount(strings.Replace(val, ":", " ", 1))
		if err != nil { // its error would quote the field
			return errors.New("payment_max_price= is not CURRENCY:AMOUNT (e.g. USD:0.002; the space of the setting's form is a colon here)")
		}
		id.PaymentMaxPrice = a
		return nil
	case "signing_key":
		if val == "" {
			return errors.New("signing_key= is empty (a key file)")
		}
		id.SigningKey = val
		return nil
	}
	if config.CheckSignatureAgent(val) != nil { // its error would quote the field
		return errors.New("signature_agent= is not an absolute https URL with a host (no user info, no fragment)")
	}
	id.SignatureAgent = val
	return nil
}
