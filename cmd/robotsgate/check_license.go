package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"

	"github.com/robotsgate/robotsgate/enforce"
	"github.com/robotsgate/robotsgate/robots"
	"github.com/robotsgate/robotsgate/robots/aipref"
	"github.com/robotsgate/robotsgate/robots/rsl"
)

// checkLicense implements "robotsgate check -license FILE -purpose LIST":
// it reads an RSL license document ("-": standard input) and prints, for
// each URL, what it says about the uses of the purposes (mapped as the
// proxy maps them, [enforce.LicenseUses]): "prohibited", "required" (a
// license token is needed: a License Server, a paid license),
// "permitted" or "none" (no <content> covers the URL); relative <content
// url> patterns bind on each URL's own origin. Notes (unknown elements,
// terms robotsgate does not evaluate) go to stderr. The exit status is 1
// when any URL is prohibited or needs a token, 0 otherwise, and 2 when
// the file cannot be read or is not an RSL document (the proxy then
// treats the terms as unknown).
func checkLicense(file, purposes string, urls []string, asJSON bool, stdin io.Reader, stdout, stderr io.Writer) int {
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "robotsgate check: "+format+"\n", a...)
		return 2
	}
	set, err := aipref.ParsePurposes([]string{purposes})
	if err != nil || enforce.LicenseUses(set) == 0 {
		return fail("-license needs -purpose with at least one of %s", aipref.PurposeList)
	}
	body, err := readWhole(file, "license", "the terms are then unknown", stdin)
	if err != nil {
		return fail("%v", err)
	}
	doc, err := rsl.Parse(body)
	if err != nil {
		return fail("-license %s: %v", file, err)
	}
	for _, n := range doc.Notes {
		fmt.Fprintf(stderr, "robotsgate check: note: license %s\n", n)
	}
	for i := range doc.Contents {
		if c := &doc.Contents[i]; c.Origin != "" {
			if u, err := url.Parse(c.URL); err == nil {
				c.Origin, _ = enforce.Origin(u)
			}
		}
	}
	enc := json.NewEncoder(stdout)
	enc.SetEscapeHTML(false)
	status := 0
	for _, raw := range urls {
		u, err := url.Parse(raw)
		origin, oerr := enforce.Origin(u)
		if err != nil || oerr != nil {
			return fail("%q is not an absolute URL", raw)
		}
		v, via := enforce.DecideLicense(doc, origin, robots.PathParamsQuery(raw), enforce.LicenseUses(set))
		if v.State == rsl.Prohibited || v.State == rsl.Required {
			status = 1
		}
		if asJSON {
			err = enc.Encode(licenseCheckResult{URL: raw, State: v.State.String(), Use: v.Use, Content: v.Content,
				Server: v.Server, Payment: v.Payment, Conditions: v.Conditions, Via: via})
		} else {
			_, err = io.WriteString(stdout, licenseCheckLine(raw, v, via))
		}
		if err != nil {
			return fail("write: %v", err)
		}
	}
	return status
}

// checkFiles checks urls against the tdmrep.json tdmFile and the RSL
// license licFile (for purposes) given beside -robots, each when not "",
// and returns the highest exit status.
func checkFiles(tdmFile, licFile, purposes string, urls []string, asJSON bool, stdin io.Reader, stdout, stderr io.Writer) int {
	status := 0
	if tdmFile != "" {
		status = checkTDMRep(tdmFile, urls, asJSON, stdin, stdout, stderr)
	}
	if licFile != "" {
		status = max(status, checkLicense(licFile, purposes, urls, asJSON, stdin, stdout, stderr))
	}
	return status
}

// licenseCheckResult is one line of "robotsgate check -license FILE -json".
type licenseCheckResult struct {
	URL        string   `json:"url"`
	State      string   `json:"license"` // none, permitted, required or prohibited
	Use        string   `json:"license_use,omitempty"`
	Content    string   `json:"license_content,omitempty"`
	Server     string   `json:"license_server,omitempty"`
	Payment    string   `json:"license_payment,omitempty"`
	Conditions []string `json:"license_conditions,omitempty"`
	Via        string   `json:"license_via,omitempty"` // the spelling that was prohibited, when not the URL's own
}

// licenseCheckLine is the text line of one URL.
func licenseCheckLine(u string, v rsl.Verdict, via string) string {
	var why []string
	switch {
	case v.State == rsl.None:
		why = append(why, "no <content> covers the URL")
	case v.Use != "":
		why = append(why, v.Use+` by <content url="`+v.Content+`">`)
	}
	if via != "" {
		why = append(why, "decided on "+via)
	}
	if v.Server != "" {
		why = append(why, "License Server "+v.Server)
	}
	if v.Payment != "" {
		why = append(why, "payment "+v.Payment)
	}
	for _, c := range v.Conditions {
		why = append(why, "not evaluated: "+c)
	}
	line := v.State.String() + " " + u
	if len(why) > 0 {
		line += "  (" + strings.Join(why, "; ") + ")"
	}
	return line + "\n"
}
