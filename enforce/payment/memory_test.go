package payment_test

import (
	"testing"
	"time"

	"github.com/robotsgate/robotsgate/enforce/enforcetest"
	"github.com/robotsgate/robotsgate/enforce/payment"
	"github.com/robotsgate/robotsgate/enforce/payment/paymenttest"
)

// TestMemoryWallet runs the wallet scenarios on one MemoryWallet (its
// "replicas" are the same wallet: it is per process).
func TestMemoryWallet(t *testing.T) {
	paymenttest.Run(t, func(_ *testing.T, clock *enforcetest.Clock, ttl time.Duration, n int) []payment.Wallet {
		w := payment.NewMemoryWallet(clock, ttl)
		ws := make([]payment.Wallet, n)
		for i := range ws {
			ws[i] = w
		}
		return ws
	})
}
