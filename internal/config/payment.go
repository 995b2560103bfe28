package config

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/robotsgate/robotsgate/enforce/payment"
)

// PaymentConfig is HTTP 402 pay-per-crawl (docs/payment.md): whether
// robotsgate pays origins' quoted prices, and the caps on what it pays.
type PaymentConfig struct {
	Mode PaymentMode // off | report | pay
	// MaxPrice is the most one request may cost; zero = none (nothing
	// is paid). Required with [PaymentPay].
	MaxPrice payment.Amount
	// Budgets cap the sums per period (fleet, identity, origin).
	Budgets []payment.Budget
}

// PaymentMode is a value of payment.mode.
type PaymentMode string

// Values of payment.mode.
const (
	PaymentOff    PaymentMode = "off"    // a 402 passes through as any response
	PaymentReport PaymentMode = "report" // a 402 passes through, audited with its quoted price
	PaymentPay    PaymentMode = "pay"    // quotes within max_price and the budgets are paid
)

// Valid reports whether m is a value of payment.mode.
func (m PaymentMode) Valid() bool { return m == PaymentOff || m == PaymentReport || m == PaymentPay }

// paymentOptions are the options of the payment: section.
func paymentOptions() []option {
	return []option{
		{"payment.mode", "payment-mode", "HTTP 402 pay-per-crawl (docs/payment.md), `mode`: off (a 402 passes through), report (passes through, audited with its quoted price) or pay (a crawler-price within max_price and the budgets is paid: the request is retried once, signed, with crawler-exact-price; needs signing.key)", func(c *Config) any { return (*string)(&c.Payment.Mode) }, atReload},
		{"payment.max_price", "payment-max-price", "the most one request may cost, as `CURRENCY AMOUNT` (e.g. USD 0.002; exact decimals, at most 6 places); required with payment.mode pay; a price in another currency is never paid", func(c *Config) any { return &c.Payment.MaxPrice }, atReload},
		{"payment.budgets", "", "spending caps, YAML only: a list of {scope, period, limit}; scope fleet (all replicas together; through Redis with a redis cache), identity (each proxy user) or origin (each origin); period day or month (UTC calendar); limit CURRENCY AMOUNT, binding only prices in its currency", func(c *Config) any { return &c.Payment.Budgets }, atReload},
	}
}

// validatePayment checks the payment: section: pay needs a max_price and
// a signing key (origins charge signed requests only, and the price
// header must be covered by the signature).
func (c *Config) validatePayment() error {
	p := &c.Payment
	if err := checkMode("payment.mode", p.Mode, PaymentOff, PaymentReport, PaymentPay); err != nil {
		return err
	}
	if err := payment.CheckBudgets(p.Budgets); err != nil {
		return errorf("payment.budgets", "%w", err)
	}
	if p.Mode != PaymentPay {
		return nil
	}
	if p.MaxPrice.IsZero() {
		return errorf("payment.max_price", "empty, but payment.mode is pay: set the most one request may cost, e.g. USD 0.01")
	}
	if c.Signing.Key == "" {
		return errorf("payment.mode", "pay needs signing.key%s: origins charge only requests signed with Web Bot Auth, whose signature covers the price header", flagOf("signing.key"))
	}
	return nil
}

// parseAmountSetting parses a max_price value: "" is none.
func parseAmountSetting(v string) (payment.Amount, error) {
	if strings.TrimSpace(v) == "" {
		return payment.Amount{}, nil
	}
	return payment.ParseAmount(strings.TrimSpace(v))
}

// decodeBudgets decodes the YAML sequence n of payment budgets.
func decodeBudgets(n *yaml.Node) ([]payment.Budget, error) {
	if isNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, errors.New("payment.budgets: want a list of mappings (- {scope: fleet, period: day, limit: USD 0.10})")
	}
	out := make([]payment.Budget, 0, len(n.Content))
	for i, it := range n.Content {
		b, err := decodeBudget(unalias(it))
		if err != nil {
			return nil, fmt.Errorf("payment.budgets[%d]: %w", i, err)
		}
		out = append(out, b)
	}
	return out, nil
}

// budgetKeys are the keys of a budget entry.
var budgetKeys = []string{"scope", "period", "limit"}

// decodeBudget decodes one entry of payment.budgets, strictly.
func decodeBudget(n *yaml.Node) (payment.Budget, error) {
	var b payment.Budget
	if n.Kind != yaml.MappingNode {
		return b, fmt.Errorf("line %d: want a mapping (scope, period, limit)", n.Line)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], unalias(n.Content[i+1])
		if seen[k.Value] {
			return b, fmt.Errorf("line %d: key %q repeated", k.Line, k.Value)
		}
		seen[k.Value] = true
		if v.Kind != yaml.ScalarNode {
			return b, fmt.Errorf("line %d: %s: want a single value", v.Line, k.Value)
		}
		switch k.Value {
		case "scope":
			b.Scope = payment.Scope(v.Value)
		case "period":
			b.Period = payment.Period(v.Value)
		case "limit":
			a, err := payment.ParseAmount(strings.TrimSpace(v.Value))
			if err != nil {
				return b, fmt.Errorf("line %d: limit: %w", v.Line, err)
			}
			b.Limit = a
		default:
			return b, fmt.Errorf("line %d: unknown key %q%s", k.Line, k.Value, Suggest(k.Value, budgetKeys))
		}
	}
	return b, nil
}
