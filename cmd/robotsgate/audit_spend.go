package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/robotsgate/robotsgate/enforce/payment"
)

// auditSpend is the spend part of "robotsgate audit -summary": the
// payments of the ledger (decision paid) among the matching records,
// summed per identity, origin and currency, exactly (micro-units).
type auditSpend map[spendKey]*spendSum

type spendKey struct {
	User     string `json:"user"`
	Origin   string `json:"origin"`
	Currency string `json:"currency"`
}

type spendSum struct {
	Payments int64
	Units    int64
}

// spendRecord is what the spend reads of a paid record.
type spendRecord struct {
	User    string `json:"user"`
	Origin  string `json:"origin"`
	Payment struct {
		Currency string `json:"currency"`
		Charged  string `json:"charged"`
	} `json:"payment"`
}

// add adds the charge of the paid record line; a charge that does not
// read as an amount is skipped (the record is still counted by reason).
func (s auditSpend) add(line []byte) {
	var r spendRecord
	if json.Unmarshal(line, &r) != nil {
		return
	}
	a, err := payment.ParseAmount(r.Payment.Currency + " " + r.Payment.Charged)
	if err != nil {
		if a, err = payment.ParseAmount(r.Payment.Charged); err != nil { // a charge in another currency is written whole
			return
		}
	}
	k := spendKey{r.User, r.Origin, a.Currency}
	sum := s[k]
	if sum == nil {
		sum = &spendSum{}
		s[k] = sum
	}
	sum.Payments++
	sum.Units = min(sum.Units+a.Units, payment.MaxUnits)
}

// spendRow is a row of the spend table.
type spendRow struct {
	spendKey
	Payments int64  `json:"payments"`
	Spent    string `json:"spent"`
}

// rows returns the spend, the largest first within each currency.
func (s auditSpend) rows() []spendRow {
	type row struct {
		spendRow
		units int64
	}
	rs := make([]row, 0, len(s))
	for k, v := range s {
		rs = append(rs, row{spendRow{k, v.Payments, payment.Amount{Currency: k.Currency, Units: v.Units}.String()}, v.Units})
	}
	slices.SortFunc(rs, func(a, b row) int {
		return cmp.Or(cmp.Compare(a.Currency, b.Currency), cmp.Compare(b.units, a.units), cmp.Compare(a.User, b.User), cmp.Compare(a.Origin, b.Origin))
	})
	out := make([]spendRow, len(rs))
	for i, r := range rs {
		out[i] = r.spendRow
	}
	return out
}

// write prints the spend table, when anything was paid.
func (s auditSpend) write(w io.Writer) {
	if len(s) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%-8s  %-16s  %-16s  %s\n", "PAYMENTS", "SPENT", "USER", "ORIGIN")
	for _, r := range s.rows() {
		fmt.Fprintf(w, "%8d  %-16s  %-16s  %s\n", r.Payments, printable(r.Spent), printable(cmp.Or(r.User, "-")), printable(r.Origin))
	}
}
