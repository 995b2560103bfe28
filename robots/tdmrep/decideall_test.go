package tdmrep

import "testing"

// TestDecideAll: a file reserves every path alike only through a rule
// whose location matches every path, with no earlier rule of another
// reservation that can match a path.
func TestDecideAll(t *testing.T) {
	for _, tc := range []struct {
		name, file string
		want       Reservation
	}{
		{"star", `[{"location":"*","tdm-reservation":1}]`, Reserved},
		{"slash", `[{"location":"/","tdm-reservation":1}]`, Reserved},
		{"slash star", `[{"location":"/*","tdm-reservation":1}]`, Reserved},
		{"stars", `[{"location":"**","tdm-reservation":1}]`, Reserved},
		{"earlier reserved rule", `[{"location":"/a","tdm-reservation":1},{"location":"*","tdm-reservation":1}]`, Reserved},
		{"earlier rule matching nothing", `[{"location":"nothing","tdm-reservation":0},{"location":"*","tdm-reservation":1}]`, Reserved},
		{"not reserved", `[{"location":"*","tdm-reservation":0}]`, NotReserved},
		{"earlier open rule", `[{"location":"/public","tdm-reservation":0},{"location":"*","tdm-reservation":1}]`, Unset},
		{"earlier unset rule", `[{"location":"/x","tdm-reservation":"maybe"},{"location":"*","tdm-reservation":1}]`, Unset},
		{"some paths", `[{"location":"/private","tdm-reservation":1}]`, Unset},
		{"anchored root", `[{"location":"/$","tdm-reservation":1}]`, Unset},
		{"empty file", `[]`, Unset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, err := Parse([]byte(tc.file))
			if err != nil {
				t.Fatal(err)
			}
			v := f.DecideAll()
			if v.Reservation != tc.want {
				t.Fatalf("DecideAll = %v, want %v", v.Reservation, tc.want)
			}
			// Whatever it says holds for paths it was not asked about.
			if tc.want != Unset {
				for _, p := range []string{"/", "/a", "/public/x", "/x?y=1"} {
					if got := f.Decide(p).Reservation; got != tc.want {
						t.Errorf("Decide(%q) = %v, DecideAll said %v", p, got, tc.want)
					}
				}
			}
		})
	}
}
