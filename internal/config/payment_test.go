package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/internal/testsupport"
)

// loadPaymentYAML loads yaml as the configuration file, with env.
func loadPaymentYAML(t *testing.T, yaml string, env map[string]string, args ...string) (Config, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "robotsgate.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return Load(append([]string{"-config", path}, args...), testsupport.EnvMap(env))
}

// TestPaymentIssueShape: the settings in the shape the feature documents
// load into typed amounts and budgets.
func TestPaymentIssueShape(t *testing.T) {
	cfg, err := loadPaymentYAML(t, `
signing: {key: /k.pem, agent: "https://crawler.example/.well-known/http-message-signatures-directory"}
payment:
  mode: pay
  max_price: USD 0.02
  budgets:
    - {scope: fleet, period: day, limit: USD 0.10}
    - {scope: identity, period: month, limit: USD 5}
    - {scope: origin, period: day, limit: USD 1}
`, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.Payment
	want := []payment.Budget{
		{Scope: payment.ScopeFleet, Period: payment.PeriodDay, Limit: payment.MustParseAmount("USD 0.1")},
		{Scope: payment.ScopeIdentity, Period: payment.PeriodMonth, Limit: payment.MustParseAmount("USD 5")},
		{Scope: payment.ScopeOrigin, Period: payment.PeriodDay, Limit: payment.MustParseAmount("USD 1")},
	}
	if p.Mode != PaymentPay || p.MaxPrice != payment.MustParseAmount("USD 0.02") || len(p.Budgets) != 3 {
		t.Fatalf("payment = %+v", p)
	}
	for i := range want {
		if p.Budgets[i] != want[i] {
			t.Errorf("budgets[%d] = %+v, want %+v", i, p.Budgets[i], want[i])
		}
	}
}

// TestPaymentFlagsAndEnv: -payment-mode and -payment-max-price, and
// their environment variables, set the section (flags win).
func TestPaymentFlagsAndEnv(t *testing.T) {
	cfg, err := loadPaymentYAML(t, "", map[string]string{"ROBOTSGATE_PAYMENT_MODE": "report", "ROBOTSGATE_PAYMENT_MAX_PRICE": "EUR 0.5"})
	if err != nil || cfg.Payment.Mode != PaymentReport || cfg.Payment.MaxPrice.String() != "EUR 0.5" {
		t.Fatalf("from the environment: %+v %v", cfg.Payment, err)
	}
	cfg, err = loadPaymentYAML(t, "", map[string]string{"ROBOTSGATE_PAYMENT_MODE": "pay"}, "-payment-mode", "report", "-payment-max-price", "USD 0.002")
	if err != nil || cfg.Payment.Mode != PaymentReport || cfg.Payment.MaxPrice.String() != "USD 0.002" {
		t.Fatalf("from flags: %+v %v", cfg.Payment, err)
	}
}

// TestPaymentValidation: each bad setting is one line naming its key.
func TestPaymentValidation(t *testing.T) {
	signed := `signing: {key: /k.pem, agent: "https://crawler.example/dir"}` + "\n"
	cases := []struct{ name, yaml, want string }{
		{"unknown mode", "payment: {mode: paid}", `payment.mode: "paid" is not one of off, report, pay (flag -payment-mode, env ROBOTSGATE_PAYMENT_MODE)`},
		{"pay without key", "payment: {mode: pay, max_price: USD 0.01}", "payment.mode: pay needs signing.key (flag -signing-key, env ROBOTSGATE_SIGNING_KEY): origins charge only requests signed"},
		{"pay without max_price", signed + "payment: {mode: pay}", "payment.max_price: empty, but payment.mode is pay"},
		{"negative price", "payment: {max_price: USD -1}", "payment.max_price: amount"},
		{"float price", "payment: {max_price: 0.01}", "payment.max_price: amount"},
		{"unknown section key", "payment: {max_prize: USD 1}", `unknown key "max_prize" (did you mean "max_price"?)`},
		{"unknown budget key", "payment: {budgets: [{scope: fleet, period: day, limt: USD 1}]}", `payment.budgets[0]: line 1: unknown key "limt" (did you mean "limit"?)`},
		{"bad scope", "payment: {budgets: [{scope: planet, period: day, limit: USD 1}]}", `scope "planet" is not fleet, identity or origin`},
		{"bad period", "payment: {budgets: [{scope: fleet, period: week, limit: USD 1}]}", `period "week" is not day or month`},
		{"no limit", "payment: {budgets: [{scope: fleet, period: day}]}", "limit missing"},
		{"bad limit", "payment: {budgets: [{scope: fleet, period: day, limit: 5 USD}]}", "payment.budgets[0]: line 1: limit: amount"},
		{"duplicate", "payment: {budgets: [{scope: fleet, period: day, limit: USD 1}, {scope: fleet, period: day, limit: USD 2}]}", "a second fleet budget per day in USD"},
		{"not a list", "payment: {budgets: fleet}", "want a list of mappings"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := loadPaymentYAML(t, c.yaml, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %v, want one line containing %q", err, c.want)
			}
		})
	}
}

// TestPaymentReloadable: a reload applies a changed cap and budgets at
// once (none of them waits for a restart).
func TestPaymentReloadable(t *testing.T) {
	old, err := loadPaymentYAML(t, "payment: {mode: report, max_price: USD 0.02}", nil)
	if err != nil {
		t.Fatal(err)
	}
	next, err := loadPaymentYAML(t, "payment: {mode: report, max_price: USD 0.01, budgets: [{scope: fleet, period: day, limit: USD 1}]}", nil)
	if err != nil {
		t.Fatal(err)
	}
	applied, restart := Changes(old, next)
	if strings.Join(applied, ",") != "payment.max_price,payment.budgets" || len(restart) != 0 {
		t.Fatalf("applied %v, restart %v", applied, restart)
	}
	if got := WithRestartOnly(next, old).Payment.MaxPrice.String(); got != "USD 0.01" {
		t.Fatalf("max_price after the reload: %s", got)
	}
}
