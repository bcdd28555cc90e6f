package store

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	etcdutl "go.etcd.io/etcd/etcdutl/v3/snapshot"
	"go.uber.org/zap"

	"kubevirt.dev/virt/apiserver/etcd"
)

// Stage writes the snapshot read from r as the embedded etcd's pending
// snapshot in restoreDir (run inside the store's pod, as the store's user,
// on the store's volume). Only a whole snapshot whose sha256 is wantSHA
// (when given) is staged; the store itself is not touched: the next start
// of the embedded etcd restores it (apiserver/etcd).
func Stage(r io.Reader, restoreDir, wantSHA string) error {
	if err := os.MkdirAll(restoreDir, 0o700); err != nil {
		return err
	}
	// A result from an earlier restore must not pass for this one's.
	if err := os.Remove(filepath.Join(restoreDir, etcd.ResultFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	pending := filepath.Join(restoreDir, etcd.PendingSnapshot)
	partial := pending + ".partial"
	f, err := os.OpenFile(partial, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	d, err := digest(io.TeeReader(r, f))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		var want *Metadata
		if wantSHA != "" {
			want = &Metadata{SHA256: wantSHA, Size: d.Size}
		}
		err = d.check(want)
	}
	if err == nil {
		_, err = etcdutl.NewV3(zap.NewNop()).Status(partial)
	}
	if err != nil {
		_ = os.Remove(partial)
		return fmt.Errorf("stage the snapshot: %w", err)
	}
	return os.Rename(partial, pending)
}
