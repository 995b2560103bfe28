package redisfleet

import (
	"context"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// newClient returns go-redis's client for the target's topology (a
// [redis.Client], a failover client or a [redis.ClusterClient], behind one interface) and
// the address shown in logs. Every call carries its own short deadline
// (timeout); the client honours it, retries once and never dials for
// seconds.
//
// The three option types share no interface, so each block sets the same
// fields: a change to one is a change to all three. Maintenance
// notifications (RESP3 push messages announcing a node's move) are turned
// off for the server and Cluster clients; [redis.FailoverOptions] has no
// such setting, as go-redis always turns them off for its failover
// client's connections.
func (t *redisTarget) newClient(timeout time.Duration) (redis.UniversalClient, string) {
	dial := max(timeout, time.Second)
	noMaint := &maintnotifications.Config{Mode: maintnotifications.ModeDisabled}
	switch t.topology {
	case Sentinel:
		o := t.failover
		o.ContextTimeoutEnabled = true
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = dial, dial, dial
		o.DialerRetries = 1
		o.MaxRetries = 1
		o.DisableIdentity = true
		return redis.NewFailoverClient(o), "sentinel " + o.MasterName + "@" + strings.Join(o.SentinelAddrs, ",")
	case Cluster:
		o := t.cluster
		o.ContextTimeoutEnabled = true
		o.DialTimeout, o.ReadTimeout, o.WriteTimeout = dial, dial, dial
		o.DialerRetries = 1
		o.MaxRetries = 1
		o.DisableIdentity = true
		o.MaintNotificationsConfig = noMaint
		return redis.NewClusterClient(o), "cluster " + strings.Join(o.Addrs, ",")
	}
	o := t.single
	o.ContextTimeoutEnabled = true
	o.DialTimeout, o.ReadTimeout, o.WriteTimeout = dial, dial, dial
	o.DialerRetries = 1
	o.MaxRetries = 1
	o.DisableIdentity = true
	o.MaintNotificationsConfig = noMaint
	return redis.NewClient(o), o.Addr
}

// ping tells whether Redis answers. For a Cluster every primary must
// answer a PING: the cluster's routing table is reloaded first, so that
// a primary lost and replaced (failover) counts as answering once its
// replica has taken over, and not before. For Sentinel, the client asks
// the sentinels for the current primary when it dials.
func (r *Redis) ping(ctx context.Context) error {
	if c, ok := r.client.(*redis.ClusterClient); ok {
		return c.ForEachMaster(ctx, func(ctx context.Context, n *redis.Client) error {
			return n.Ping(ctx).Err()
		})
	}
	return r.client.Ping(ctx).Err()
}

// Topology returns how this Redis is reached (standalone, sentinel,
// cluster).
func (r *Redis) Topology() Topology { return r.topology }
