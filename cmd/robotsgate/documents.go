package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/rs/zerolog"

	"github.com/robotsgate/robotsgate/enforce/documents"
	"github.com/robotsgate/robotsgate/internal/config"
	"github.com/robotsgate/robotsgate/proxy/mitm"
)

// The policy documents decisions used, kept under the data directory
// (docs/evidence.md): opened by serve, read by "audit -document".

// documentsDir returns where cfg keeps the policy documents:
// <https.data_dir>/documents.
func documentsDir(cfg config.Config) (string, error) {
	dir, err := mitm.DataDir(cfg.HTTPS.DataDir)
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "documents"), nil
}

// openDocuments opens the store of policy documents of cfg, nil when
// robots.documents_mb is 0 or there is no data directory (logged: the
// audit records still carry the hashes). It touches no file: the store
// creates its directory at its first write.
func openDocuments(cfg config.Config, log zerolog.Logger) *documents.Store {
	if cfg.Robots.DocumentsMB == 0 {
		return nil
	}
	dir, err := documentsDir(cfg)
	if err != nil {
		log.Error().Err(err).Msg("policy documents are not kept (robots.documents_mb): audit records still name their hashes")
		return nil
	}
	return documents.Open(dir, int64(cfg.Robots.DocumentsMB)<<20, log.With().Str("component", "documents").Logger())
}

// printDocument is "robotsgate audit -document SHA": it writes the kept
// document whose hash starts with sum to stdout.
func printDocument(_ context.Context, fl auditFlags, env func(string) string, stdout, stderr io.Writer) int {
	var args []string
	if fl.config != "" {
		args = []string{"-config", fl.config}
	}
	cfg, err := config.Load(args, env)
	if err != nil {
		return auditFail(stderr, 2, "%v", err)
	}
	dir, err := documentsDir(cfg)
	if err != nil {
		return auditFail(stderr, 1, "%v", err)
	}
	_, body, err := documents.Read(dir, fl.document)
	if err != nil {
		return auditFail(stderr, 1, "-document: %v", err)
	}
	if _, err := stdout.Write(body); err != nil {
		return auditFail(stderr, 1, "%v", fmt.Errorf("write: %w", err))
	}
	return 0
}
