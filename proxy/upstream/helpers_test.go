package upstream

import "time"

// testTimeout bounds every wait of these tests.
const testTimeout = 10 * time.Second
