package enforce

import "errors"

// Policy fetches refused by the egress policy: the dialer of the policy
// transport (package proxy) refuses to connect to an address robotsgate
// must not reach (link-local, cloud metadata, private), wrapping
// [ErrDestinationPrivate]; the fetch is then unreachable with the kind
// [FetchDestinationPrivate], and a decision that rests on it refuses
// with [ReasonDestinationPrivate]. Unlike other unreachable fetches it
// never ages into "no robots.txt" (robots.unreachable_window): an origin
// whose policy files lead to a private address stays refused.

// ErrDestinationPrivate is the error (wrapped) of a connection refused
// because its address is one the egress policy forbids.
var ErrDestinationPrivate = errors.New("the destination address is not one robotsgate may connect to (egress policy)")

// ReasonDestinationPrivate: the request's destination, or where its
// robots.txt fetch led (a redirect), is an address the egress policy
// forbids (link-local, cloud metadata, private): refused, nothing sent there.
const ReasonDestinationPrivate Reason = "destination-private"

// FetchDestinationPrivate is the kind of a fetch whose connection the
// egress policy refused.
const FetchDestinationPrivate FetchErrorKind = "destination-private"

// refusedDestination reports whether the unreachable result r was refused
// by the egress policy: it never counts as an origin gone for longer than
// the unreachable window.
func refusedDestination(r FetchResult) bool { return r.ErrKind == FetchDestinationPrivate }
