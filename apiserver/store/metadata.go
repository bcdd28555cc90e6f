package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"kubevirt.dev/virt/apis/virtualization"
)

// KeyRoot is where virt-apiserver keeps its objects in etcd:
// /registry/<group>/<resource>/[<namespace>/]<name>.
const KeyRoot = "/registry"

// GroupPrefix is the prefix of every object of the platform's API: a
// snapshot without a key under it is not of this store.
const GroupPrefix = KeyRoot + "/" + virtualization.GroupName + "/"

// Metadata describes a backup; it is written as FILE.json beside FILE.
type Metadata struct {
	Snapshot string `json:"snapshot"`
	// Store names the store the snapshot is of (GroupPrefix's group): a
	// restore refuses a snapshot of another.
	Store       string `json:"store"`
	SHA256      string `json:"sha256"`
	Size        int64  `json:"size"`
	Mode        string `json:"mode"`
	Source      string `json:"source"`
	Time        string `json:"time"`
	Revision    int64  `json:"revision"`
	TotalKeys   int    `json:"totalKeys"`
	EtcdVersion string `json:"etcdVersion"`
	Prefix      string `json:"prefix"`
	// Keys counts the keys per <group>/<resource> at Revision.
	Keys map[string]int `json:"keys"`
}

// ReadMetadata reads FILE.json of the backup FILE.
func ReadMetadata(file string) (Metadata, error) {
	var m Metadata
	raw, err := os.ReadFile(file + ".json")
	if err != nil {
		return m, err
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		return m, fmt.Errorf("%s.json: %w", file, err)
	}
	return m, nil
}

func writeMetadata(path string, m Metadata) error {
	raw, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(raw, '\n'), 0o600)
}

// Digest is a snapshot file's sha256 and size, and whether its last 32
// bytes are the sha256 of the rest: the integrity hash etcd appends to
// every snapshot it streams (and checks again when it restores one).
type Digest struct {
	SHA256  string
	Size    int64
	Trailer bool
}

// digest reads r to its end.
func digest(r io.Reader) (Digest, error) {
	whole, body := sha256.New(), sha256.New()
	// The last sha256.Size bytes are held back from body until more come.
	var tail []byte
	buf := make([]byte, 1<<20)
	var size int64
	for {
		n, err := r.Read(buf)
		if n > 0 {
			whole.Write(buf[:n])
			size += int64(n)
			tail = append(tail, buf[:n]...)
			if over := len(tail) - sha256.Size; over > 0 {
				body.Write(tail[:over])
				tail = append(tail[:0], tail[over:]...)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return Digest{}, err
		}
	}
	return Digest{
		SHA256:  hex.EncodeToString(whole.Sum(nil)),
		Size:    size,
		Trailer: len(tail) == sha256.Size && bytes.Equal(body.Sum(nil), tail),
	}, nil
}

// fileDigest is digest of a file.
func fileDigest(path string) (Digest, error) {
	f, err := os.Open(path)
	if err != nil {
		return Digest{}, err
	}
	defer f.Close()
	return digest(f)
}

// check fails unless d is a whole etcd snapshot and, with want set, the one
// want describes.
func (d Digest) check(want *Metadata) error {
	if want != nil && (d.SHA256 != want.SHA256 || d.Size != want.Size) {
		return fmt.Errorf("sha256 %s and %d bytes, its metadata says %s and %d bytes: a truncated or altered copy", d.SHA256, d.Size, want.SHA256, want.Size)
	}
	if !d.Trailer {
		return fmt.Errorf("its integrity hash does not match (a truncated or altered snapshot, or no snapshot etcd streamed)")
	}
	return nil
}
