package main

import (
	"io"
	"net/http"
	"testing"
)

// getAll sends a GET for each of urls through the proxy and drains the
// responses.
func (r *running) getAll(t *testing.T, urls ...string) {
	t.Helper()
	for _, u := range urls {
		resp, err := r.client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}

// get fetches u through the proxy and returns the status and body.
func (r *running) get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := r.client.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// metrics returns what the process's /metrics exposes.
func (r *running) metrics(t *testing.T) string {
	t.Helper()
	resp, err := http.Get("http://" + r.addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("/metrics: %d %v", resp.StatusCode, err)
	}
	return string(b)
}
