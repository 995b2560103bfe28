package config

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/robots/aipref"
)

// Values of a site's policy ([Site.Policy]).
const (
	SitePolicyAllow = "allow" // written permission: forwarded even where robots.txt refuses
	SitePolicyDeny  = "deny"  // never fetched, not even robots.txt
)

// Site is one per-site exception (the sites: list): what robotsgate does
// differently for the origins Match covers.
type Site struct {
	// Match is the pattern as written: an origin (https://partner.example),
	// a host (slow.example) or "*." and a domain (*.example.org).
	Match string
	// Policy is "" (only CrawlDelay or Purposes change), [SitePolicyAllow] or
	// [SitePolicyDeny].
	Policy string
	Note   string // why; required with SitePolicyAllow
	// CrawlDelay is a floor on robots.txt's Crawl-delay for the site
	// (never looser); 0 = none.
	CrawlDelay time.Duration
	// Purposes replace the declared purposes of requests to the site when
	// HasPurposes.
	Purposes    aipref.Set
	HasPurposes bool

	// Set by Validate: the canonical pattern, exactly one of them.
	Origin string // scheme://host[:port], as enforce.Origin spells it
	Host   string // an exact host, as enforce.Origin spells it
	Domain string // "*." patterns: the domain (its subdomains match, not itself)
}

// SiteKind orders the specificity of a site pattern: a larger kind wins.
type SiteKind int

// Kinds of site patterns, least specific first.
const (
	SiteDomain SiteKind = iota + 1
	SiteHost
	SiteOrigin
)

// SiteFor returns the exception that applies to origin (as [enforce.Origin]
// spells it), and whether one does: the most specific match wins (an
// origin, then an exact host, then the longest "*." domain), and at equal
// specificity a deny wins. sites must be validated.
func SiteFor(sites []Site, origin string) (Site, bool) {
	host := hostOfOrigin(origin)
	var best Site
	bestKind, bestLen := SiteKind(0), 0
	for i := range sites {
		s := &sites[i]
		kind, n := s.matches(origin, host)
		if kind == 0 {
			continue
		}
		better := kind > bestKind || (kind == bestKind && n > bestLen)
		tie := kind == bestKind && n == bestLen && s.Policy == SitePolicyDeny
		if better || tie {
			best, bestKind, bestLen = *s, kind, n
		}
	}
	return best, bestKind != 0
}

// matches returns the kind of s's pattern and its length when it covers
// origin (of host host), else 0. It allocates nothing: [SiteFor] asks
// every entry of sites: for each request.
func (s *Site) matches(origin, host string) (SiteKind, int) {
	switch {
	case s.Origin != "":
		if s.Origin == origin {
			return SiteOrigin, len(s.Origin)
		}
	case s.Host != "":
		if s.Host == host {
			return SiteHost, len(s.Host)
		}
	case s.Domain != "":
		if d := s.Domain; len(host) > len(d) && host[len(host)-len(d)-1] == '.' && strings.HasSuffix(host, d) {
			return SiteDomain, len(d)
		}
	}
	return 0, 0
}

// hostOfOrigin returns the host of a canonical origin, without its port.
func hostOfOrigin(origin string) string {
	_, rest, ok := strings.Cut(origin, "://")
	if !ok {
		return ""
	}
	u := url.URL{Host: rest}
	return u.Hostname()
}

// validateSites checks the sites: list and fills in each entry's
// canonical pattern.
func (c *Config) validateSites() error {
	seen := make(map[string]string) // canonical pattern -> policy of a non-deny entry
	for i := range c.Sites {
		s := &c.Sites[i]
		key := fmt.Sprintf("sites[%d]", i)
		if err := s.canonicalise(); err != nil {
			return errorf(key+".match", "%q: %w", s.Match, err)
		}
		if err := s.checkPolicy(); err != nil {
			return errorf(key, "%s (match %q)", err, s.Match)
		}
		if s.CrawlDelay > c.Politeness.MaxCrawlDelay {
			return errorf(key+".crawl_delay", "%v is above politeness.max_crawl_delay (%v), which would clamp it", s.CrawlDelay, c.Politeness.MaxCrawlDelay)
		}
		pat := s.Origin + "|" + s.Host + "|" + s.Domain
		if s.Policy != SitePolicyDeny {
			if _, dup := seen[pat]; dup {
				return errorf(key, "match %q repeats an earlier entry's pattern: merge them (only a deny may repeat a pattern, and wins)", s.Match)
			}
			seen[pat] = s.Policy
		}
	}
	return nil
}

// checkPolicy checks that s's fields fit its policy.
func (s *Site) checkPolicy() error {
	switch s.Policy {
	case "":
		if s.CrawlDelay == 0 && !s.HasPurposes {
			return errors.New("says nothing: give a policy (allow or deny), a crawl_delay or purposes")
		}
	case SitePolicyAllow:
		if strings.TrimSpace(s.Note) == "" {
			return errors.New("policy allow needs a note saying where the written permission is")
		}
	case SitePolicyDeny:
		if s.CrawlDelay != 0 || s.HasPurposes {
			return errors.New("policy deny never fetches: crawl_delay and purposes have no effect")
		}
	default:
		return fmt.Errorf("policy %q is not allow or deny", s.Policy)
	}
	if s.CrawlDelay < 0 {
		return fmt.Errorf("crawl_delay %v is negative", s.CrawlDelay)
	}
	return nil
}

// canonicalise parses s.Match into Origin, Host or Domain, spelled as
// [enforce.Origin] spells origins, so that every spelling of a host (case,
// IDNA, default port) matches the same.
func (s *Site) canonicalise() error {
	m := strings.TrimSpace(s.Match)
	switch {
	case m == "":
		return errors.New("empty: want an origin (https://partner.example), a host (slow.example) or *.domain")
	case strings.Contains(m, "://"):
		u, err := url.Parse(m)
		if err != nil {
			return fmt.Errorf("not an origin: %w", err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("scheme %q: want http or https", u.Scheme)
		}
		if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			return errors.New("an origin has no path, query, fragment or userinfo")
		}
		o, err := enforce.Origin(&url.URL{Scheme: u.Scheme, Host: u.Host})
		if err != nil {
			return err
		}
		s.Origin = o
		return nil
	case strings.HasPrefix(m, "*."):
		h, err := canonicalHost(m[2:])
		if err != nil {
			return err
		}
		if strings.Contains(h, ":") || strings.Trim(h, "0123456789.") == "" {
			return errors.New("*. needs a domain name, not an address")
		}
		s.Domain = h
		return nil
	case strings.Contains(m, "*"):
		return errors.New("a wildcard is only allowed as a leading \"*.\"")
	}
	h, err := canonicalHost(m)
	if err != nil {
		return err
	}
	s.Host = h
	return nil
}

// canonicalHost returns host (without a port) as [enforce.CanonicalHost]
// spells it (an IPv6 address without its brackets, as [hostOfOrigin] gives
// it).
func canonicalHost(host string) (string, error) {
	u := &url.URL{Scheme: "http", Host: host}
	if u.Port() != "" || strings.HasSuffix(host, ":") {
		return "", errors.New("a host pattern has no port: write an origin (https://host:port)")
	}
	if strings.ContainsAny(host, "/?#@ ") {
		return "", errors.New("not a host name")
	}
	h, err := enforce.CanonicalHost(u.Hostname())
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(strings.TrimPrefix(h, "["), "]"), nil
}

// decodeSites decodes the YAML sequence n of site exceptions.
func decodeSites(n *yaml.Node) ([]Site, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, errors.New("sites: want a list of mappings (- match: ...)")
	}
	out := make([]Site, 0, len(n.Content))
	for i, it := range n.Content {
		s, err := decodeSite(unalias(it))
		if err != nil {
			return nil, fmt.Errorf("sites[%d]: %w", i, err)
		}
		out = append(out, s)
	}
	return out, nil
}

// decodeSite decodes one entry of sites:, strictly.
func decodeSite(n *yaml.Node) (Site, error) {
	var s Site
	if n.Kind != yaml.MappingNode {
		return s, fmt.Errorf("line %d: want a mapping (match, policy, note, crawl_delay, purposes)", n.Line)
	}
	seen := make(map[string]bool)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], unalias(n.Content[i+1])
		if seen[k.Value] {
			return s, fmt.Errorf("line %d: key %q repeated", k.Line, k.Value)
		}
		seen[k.Value] = true
		if err := s.setField(k.Value, v); err != nil {
			return s, fmt.Errorf("line %d: %s: %w", v.Line, k.Value, err)
		}
	}
	return s, nil
}

// setField sets the field key of s from the YAML value v.
func (s *Site) setField(key string, v *yaml.Node) error {
	if key == "purposes" {
		var items []string
		switch v.Kind {
		case yaml.SequenceNode:
			for _, it := range v.Content {
				items = append(items, unalias(it).Value)
			}
		case yaml.ScalarNode:
			items = []string{v.Value}
		}
		set, err := aipref.ParsePurposes(items)
		s.Purposes, s.HasPurposes = set, true
		return err
	}
	if v.Kind != yaml.ScalarNode {
		return errors.New("want a single value")
	}
	switch key {
	case "match":
		s.Match = v.Value
	case "policy":
		s.Policy = v.Value
	case "note":
		s.Note = v.Value
	case "crawl_delay":
		return parseInto(&s.CrawlDelay, v.Value, parseDuration)
	default:
		return fmt.Errorf("unknown key (want match, policy, note, crawl_delay or purposes)")
	}
	return nil
}
