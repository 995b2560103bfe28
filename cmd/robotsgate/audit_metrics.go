package main

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// auditCounts is what the audit log ([audit.Auditor]) reports.
type auditCounts interface {
	Written() uint64
	Failed() uint64
}

// registerAuditMetrics exports the audit log's counters:
// robotsgate_audit_records_total (records written) and
// robotsgate_audit_write_errors_total (records that could not be
// written). A block whose record is not written is a block nobody can
// prove, so the second one is what operators alert on.
func registerAuditMetrics(reg prometheus.Registerer, a auditCounts) error {
	written := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "robotsgate_audit_records_total",
		Help: "Audit records written.",
	}, func() float64 { return float64(a.Written()) })
	failed := prometheus.NewCounterFunc(prometheus.CounterOpts{
		Name: "robotsgate_audit_write_errors_total",
		Help: "Audit records that could not be written (write error, stalled or closed audit log).",
	}, func() float64 { return float64(a.Failed()) })
	var errs []error
	for _, c := range []prometheus.Collector{written, failed} {
		if err := reg.Register(c); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("audit metrics: %w", err)
	}
	return nil
}
