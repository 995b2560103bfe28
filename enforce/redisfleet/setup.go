package redisfleet

// Redis settings that cannot work: the errors no retry mends (an unknown
// master name at a sentinel that answered, a database number the server
// does not have, cluster mode against a server without it or the
// reverse, refused credentials, a certificate that does not verify),
// told apart from an outage and worded as what happened.

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// setupError is a cache setting that cannot work: New returns it, and
// the start stops.
type setupError struct{ msg string }

func (e *setupError) Error() string { return e.msg }

// fixHint names the setting to correct, at the end of every message.
const fixHint = "correct the cache setting (-cache, ROBOTSGATE_CACHE)"

// where is how messages name the servers of a target.
func (t *redisTarget) where() string {
	switch t.topology {
	case Sentinel:
		return fmt.Sprintf("the primary the sentinels at %s name %q", strings.Join(t.failover.SentinelAddrs, ","), t.failover.MasterName)
	case Cluster:
		return "the cluster node(s) at " + strings.Join(t.cluster.Addrs, ",")
	}
	return "the Redis server at " + t.single.Addr
}

// cannotWork returns what err says about a setting that cannot work,
// worded for the operator, or "" when err may be temporary (an outage,
// a timeout, a failover in progress).
func (t *redisTarget) cannotWork(err error) string {
	if err == nil {
		return ""
	}
	if m := t.tlsProblem(err); m != "" {
		return m
	}
	w := t.where()
	switch {
	case redis.HasErrorPrefix(err, "WRONGPASS"):
		return w + " refused the cache URL's user name and password (WRONGPASS): " + fixHint
	case redis.HasErrorPrefix(err, "NOAUTH"):
		return w + " requires a password and the cache URL gives none (NOAUTH): add user:password@ to the URL; " + fixHint
	case strings.Contains(err.Error(), "called without any password configured"):
		return w + " has no password set, but the cache URL gives one: remove it from the URL or set it on the server; " + fixHint
	case redis.HasErrorPrefix(err, "DB index is out of range"):
		return fmt.Sprintf("%s has no database %d (its 'databases' setting is lower): use a smaller database number; %s", w, t.db(), fixHint)
	case strings.Contains(err.Error(), "cluster support disabled"):
		return w + " is not a Redis Cluster node (cluster support disabled): use redis:// (one server) or redis-sentinel:// instead of redis-cluster://; " + fixHint
	case t.topology != Cluster && (redis.HasErrorPrefix(err, "MOVED") || redis.HasErrorPrefix(err, "ASK ")):
		return w + " is a Redis Cluster node that sends keys to other nodes (MOVED): use redis-cluster:// with the cluster's nodes; " + fixHint
	case t.topology == Sentinel && errors.Is(err, redis.Nil) && strings.Contains(err.Error(), "sentinel"):
		return fmt.Sprintf("the sentinels at %s answered but know no master named %q: use the name of their 'sentinel monitor' line; %s",
			strings.Join(t.failover.SentinelAddrs, ","), t.failover.MasterName, fixHint)
	}
	return ""
}

// db is the database number of a standalone or Sentinel target.
func (t *redisTarget) db() int {
	if t.failover != nil {
		return t.failover.DB
	}
	if t.single != nil {
		return t.single.DB
	}
	return 0
}

// tlsProblem words a TLS error that no retry mends: a certificate that
// does not verify (unknown authority, name mismatch, expired) or a
// server that does not speak TLS at all.
func (t *redisTarget) tlsProblem(err error) string {
	var cv *tls.CertificateVerificationError
	if errors.As(err, &cv) {
		return fmt.Sprintf("%s presented a TLS certificate that does not verify (%v): give the server a certificate for the name in the URL, signed by a CA this host trusts; %s",
			t.where(), cv.Err, fixHint)
	}
	var rh tls.RecordHeaderError
	if errors.As(err, &rh) {
		return t.where() + " does not speak TLS: use redis… instead of rediss… in the URL's scheme, or enable TLS on the server; " + fixHint
	}
	return ""
}

// checkStart runs the start-up checks of New: a setting that cannot
// work is returned as a [setupError]; an outage (nothing answers) is
// not an error, the Redis starts on its local fallbacks.
func (r *Redis) checkStart(ctx context.Context, t *redisTarget) error {
	if t.topology == Sentinel {
		if err := checkSentinels(ctx, t); err != nil {
			return err
		}
	}
	err := r.ping(ctx)
	if err == nil && t.topology == Cluster {
		// The first keyed command makes the cluster client load the
		// server's command table (a large reply); loaded now, it does
		// not hold up the first requests past their short deadline.
		err = r.client.Exists(ctx, r.keys.robots("-")).Err()
	}
	if err == nil && t.topology != Cluster {
		if info, ierr := r.client.Info(ctx, "cluster").Result(); ierr == nil && strings.Contains(info, "cluster_enabled:1") {
			return &setupError{t.where() + " is a Redis Cluster node: its keys live on several nodes, which a redis:// URL cannot follow (MOVED); use redis-cluster:// with the cluster's nodes; " + fixHint}
		}
	}
	if m := t.cannotWork(err); m != "" {
		return &setupError{m}
	}
	if err != nil {
		r.health.fail(ctx, "connect", err)
	}
	return nil
}

// checkSentinels asks each sentinel for the master's address: a sentinel
// that answers without knowing the master's name, that is no sentinel,
// or that refuses the sentinel credentials makes a setting that cannot
// work, unless another sentinel knows the master. Sentinels that do not
// answer say nothing.
func checkSentinels(ctx context.Context, t *redisTarget) error {
	o := t.failover
	var problem string
	for _, addr := range o.SentinelAddrs {
		c := redis.NewSentinelClient(&redis.Options{Addr: addr, Username: o.SentinelUsername, Password: o.SentinelPassword,
			TLSConfig: o.TLSConfig, DialTimeout: o.DialTimeout, ReadTimeout: o.ReadTimeout, WriteTimeout: o.WriteTimeout,
			MaxRetries: -1, DisableIdentity: true})
		_, err := c.GetMasterAddrByName(ctx, o.MasterName).Result()
		_ = c.Close()
		switch {
		case err == nil:
			return nil
		case errors.Is(err, redis.Nil):
			problem = fmt.Sprintf("the sentinel at %s answered but knows no master named %q: use the name of its 'sentinel monitor' line; %s", addr, o.MasterName, fixHint)
		case redis.HasErrorPrefix(err, "unknown command"):
			problem = fmt.Sprintf("the server at %s is not a sentinel (it does not know the SENTINEL command): list the sentinels' addresses in redis-sentinel://, or use redis:// for one server; %s", addr, fixHint)
		case redis.HasErrorPrefix(err, "WRONGPASS"), redis.HasErrorPrefix(err, "NOAUTH"):
			problem = fmt.Sprintf("the sentinel at %s refused the sentinel credentials (sentinel_password, sentinel_username): %s", addr, fixHint)
		default:
			if m := t.tlsProblem(err); m != "" {
				problem = m
			}
		}
	}
	if problem != "" {
		return &setupError{problem}
	}
	return nil
}
