package testsupport

import (
	"errors"
	"io"
	"net/http"
	"testing"
)

func TestSink(t *testing.T) {
	var s Sink
	if _, err := io.WriteString(&s, `{"reason":"allowed"}`+"\n"+`{"reason":"disallowed","n":2}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if recs := s.Records(t); len(recs) != 2 || recs[1]["n"] != 2.0 {
		t.Fatalf("Records = %v", recs)
	}
	if rec := s.Find(t, "disallowed"); rec["n"] != 2.0 {
		t.Fatalf("Find = %v", rec)
	}
	s.Close()
	if _, err := s.Write([]byte("x")); !errors.Is(err, io.ErrClosedPipe) || !s.Closed() {
		t.Fatalf("Write after Close: %v, Closed %v", err, s.Closed())
	}
}

func TestMetricValue(t *testing.T) {
	exp := Exposition(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "# HELP x_total X.\nx_total{a=\"b\"} 3\nx_total{a=\"c\"} 4.5\n")
	}))
	for series, want := range map[string]float64{`x_total{a="b"}`: 3, `x_total{a="c"}`: 4.5, `x_total{a="d"}`: -1, "x_total": -1} {
		if got := MetricValue(t, exp, series); got != want {
			t.Errorf("%s = %v, want %v", series, got, want)
		}
	}
}
