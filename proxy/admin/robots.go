package admin

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/robotsgate/robotsgate/enforce"
)

// originParam returns the canonical origins of the query's origin
// parameter, read as [enforce.OriginsOf] reads it (and as "robotsgate
// audit -origin" does): an origin or any URL of it names one, a host
// (with an optional port) its origins under http and https.
func originParam(r *http.Request) ([]string, error) {
	raw := r.URL.Query().Get("origin")
	if raw == "" {
		return nil, errors.New("origin: missing query parameter (e.g. ?origin=https://example.com)")
	}
	return enforce.OriginsOf(raw)
}

// robotsGet is GET /v1/robots: the cached entry of the origin (for a
// host, its https origin's, else its http origin's); with fetch=1 the
// entry fetched when absent or stale (for a host with neither cached, the
// https origin's).
func (a *Admin) robotsGet(w http.ResponseWriter, r *http.Request) {
	origins, err := originParam(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, jsonError{Error: err.Error()})
		return
	}
	origin := origins[len(origins)-1]
	var e *enforce.Entry
	for i := len(origins) - 1; i >= 0 && e == nil; i-- {
		if c, ok := a.cfg.Cache.Cached(r.Context(), origins[i]); ok {
			e, origin = c, origins[i]
		}
	}
	if fetch, _ := strconv.ParseBool(r.URL.Query().Get("fetch")); fetch {
		if e, err = a.cfg.Cache.Entry(r.Context(), origin); err != nil {
			writeJSON(w, http.StatusGatewayTimeout, jsonError{Error: "fetching " + origin + "/robots.txt: " + err.Error()})
			return
		}
	} else if e == nil {
		msg := origin + "/robots.txt is not cached (add &fetch=1 to fetch it)"
		if len(origins) > 1 {
			msg = "neither " + origins[0] + "/robots.txt nor " + origins[1] + "/robots.txt is cached (add &fetch=1 to fetch the https one)"
		}
		writeJSON(w, http.StatusNotFound, jsonError{Error: msg})
		return
	}
	writeJSON(w, http.StatusOK, newEntryJSON(e, a.cfg.Now()))
}

// purgeJSON is the answer of DELETE /v1/robots.
type purgeJSON struct {
	Origin    string `json:"origin"`
	Purged    bool   `json:"purged"`     // always true: the entry is gone
	WasCached bool   `json:"was_cached"` // an entry existed
	// Origins are the origins purged when the parameter named a host
	// (http and https).
	Origins []string `json:"origins,omitempty"`
}

// robotsDelete is DELETE /v1/robots: the origin's entry forgotten (for a
// host, both its origins').
func (a *Admin) robotsDelete(w http.ResponseWriter, r *http.Request) {
	origins, err := originParam(r)
	if err != nil {
		writeJSON(w, http.StatusBadRequest, jsonError{Error: err.Error()})
		return
	}
	ans := purgeJSON{Origin: origins[0], Purged: true}
	if len(origins) > 1 {
		ans.Origin, ans.Origins = r.URL.Query().Get("origin"), origins
	}
	for _, o := range origins {
		_, was := a.cfg.Cache.Cached(r.Context(), o)
		ans.WasCached = ans.WasCached || was
		a.cfg.Cache.Purge(r.Context(), o)
	}
	writeJSON(w, http.StatusOK, ans)
}
