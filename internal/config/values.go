package config

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// set parses one value of o into its field of c. A list is given as one
// comma-separated string (flags, environment) or as the items of a YAML
// sequence, each parsed alone; items says which. The error holds no key:
// the caller names where the value came from.
func (o option) set(c *Config, v string, items []string) error {
	if items == nil {
		items = SplitList(v)
	}
	switch p := o.field(c).(type) {
	case *string:
		*p = v
	case *int:
		return parseInto(p, v, parseInt)
	case *bool:
		return parseInto(p, v, parseBool)
	case *time.Duration:
		return parseInto(p, v, parseDuration)
	case **url.URL:
		return parseInto(p, v, parseProxyURL)
	case *[]string:
		*p = items
	case *[]int:
		return parseList(p, items, parsePort)
	case *[]netip.Prefix:
		return parseList(p, items, parseCIDR)
	case *[]Site:
		if len(items) > 0 {
			return errors.New("set sites in the YAML configuration file (a list of mappings)")
		}
		*p = nil
	case *[]payment.Budget:
		if len(items) > 0 {
			return errors.New("set payment.budgets in the YAML configuration file (a list of mappings)")
		}
		*p = nil
	case *payment.Amount:
		return parseInto(p, v, parseAmountSetting)
	case *aipref.Set:
		set, err := aipref.ParsePurposes(items)
		if err != nil {
			return err
		}
		*p = set
	case *aipref.Use:
		return parseInto(p, strings.TrimSpace(v), aipref.ParseUse)
	default:
		return fmt.Errorf("unsupported field type %T", p)
	}
	return nil
}

// parseInto parses v with parse into *p.
func parseInto[T any](p *T, v string, parse func(string) (T, error)) error {
	x, err := parse(v)
	if err != nil {
		return err
	}
	*p = x
	return nil
}

// parseList parses every item with parse into *p.
func parseList[T any](p *[]T, items []string, parse func(string) (T, error)) error {
	out := make([]T, 0, len(items))
	for _, s := range items {
		x, err := parse(s)
		if err != nil {
			return &itemError{index: len(out), err: err}
		}
		out = append(out, x)
	}
	if len(out) == 0 {
		out = nil
	}
	*p = out
	return nil
}

// itemError is a bad item of a list; its text is the item's problem, the
// YAML loader adds the index to the key.
type itemError struct {
	index int
	err   error
}

func (e *itemError) Error() string { return e.err.Error() }
func (e *itemError) Unwrap() error { return e.err }

// get formats o's field of c the way set reads it.
func (o option) get(c *Config) string {
	switch p := o.field(c).(type) {
	case *string:
		return *p
	case *int:
		return strconv.Itoa(*p)
	case *bool:
		return strconv.FormatBool(*p)
	case *time.Duration:
		return p.String()
	case **url.URL:
		if *p == nil {
			return ""
		}
		return (*p).Redacted()
	case *[]string:
		return strings.Join(*p, ",")
	case *[]int:
		return joinList(*p, strconv.Itoa)
	case *[]netip.Prefix:
		return joinList(*p, netip.Prefix.String)
	case *aipref.Set:
		return p.String()
	case *[]Site:
		return joinList(*p, func(s Site) string { return s.Match })
	case *[]payment.Budget:
		return joinList(*p, payment.Budget.String)
	case *payment.Amount:
		return p.String()
	case *aipref.Use:
		return p.String()
	}
	return ""
}

// joinList formats the items of l with f, comma-separated.
func joinList[T any](l []T, f func(T) string) string {
	s := make([]string, len(l))
	for i, x := range l {
		s[i] = f(x)
	}
	return strings.Join(s, ",")
}

// isBool reports whether o is a boolean option (a flag that needs no value).
func (o option) isBool() bool {
	_, ok := o.field(&Config{}).(*bool)
	return ok
}

// isList reports whether o takes a list (a YAML sequence).
func (o option) isList() bool {
	switch o.field(&Config{}).(type) {
	case *[]string, *[]int, *[]netip.Prefix, *aipref.Set, *[]Site, *[]payment.Budget:
		return true
	}
	return false
}

// SplitList splits a comma-separated list (a list setting's flag or
// environment value), trimming spaces and dropping empty items.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func parseInt(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", v)
	}
	return n, nil
}

func parseBool(v string) (bool, error) {
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("%q is not a boolean (true or false)", v)
	}
	return b, nil
}

func parseDuration(v string) (time.Duration, error) {
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration (e.g. 30s, 5m, 24h)", v)
	}
	return d, nil
}

// parsePort parses one item of a port list; the range is checked by
// Validate.
func parsePort(v string) (int, error) {
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer (want comma-separated port numbers, e.g. 443,8443)", v)
	}
	return n, nil
}

// parseCIDR parses a CIDR ("10.0.0.0/8") or a single address
// ("10.1.2.3"). An IPv4-mapped IPv6 network is turned into its IPv4 one,
// and host bits are cleared.
func parseCIDR(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if !strings.Contains(s, "/") {
		addr, err := netip.ParseAddr(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is neither a CIDR nor an address", s)
		}
		addr = addr.Unmap()
		return netip.PrefixFrom(addr, addr.BitLen()), nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR: %w", s, err)
	}
	if p.Addr().Is4In6() {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p.Masked(), nil
}

// parseProxyURL parses upstream_proxy: "" (none) or an http:// or
// https:// URL with a host. The errors never echo a password.
func parseProxyURL(s string) (*url.URL, error) {
	if s == "" {
		return nil, nil
	}
	u, err := url.Parse(s)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // without the URL
		}
		return nil, fmt.Errorf("not a valid URL: %w", err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http:// or https:// URL with a host", u.Redacted())
	}
	return u, nil
}
