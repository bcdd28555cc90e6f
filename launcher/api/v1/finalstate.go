package v1

import (
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
)

// The final-state file (layout.FinalStateFile, next to the launcher's
// socket) is how a launcher that has exited still tells the node how its
// domain ended: the Domain as protojson. Fields are only ever added, so a
// reader ignores the ones it does not know.

// MaxFinalStateBytes is the most a final-state file may hold: the node
// refuses to read a bigger one (a tenant controls the file). A domain's
// record is a few KiB; the cap leaves room for many NICs and the guest
// agent's capped report.
const MaxFinalStateBytes = 64 << 10

// MarshalFinalState is the final-state file's content for d.
func MarshalFinalState(d *Domain) ([]byte, error) {
	b, err := protojson.MarshalOptions{Multiline: true, Indent: "  "}.Marshal(d)
	if err != nil {
		return nil, fmt.Errorf("marshal final state: %w", err)
	}
	return append(b, '\n'), nil
}

// UnmarshalFinalState parses a final-state file's content.
func UnmarshalFinalState(data []byte) (*Domain, error) {
	d := &Domain{}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(data, d); err != nil {
		return nil, err
	}
	return d, nil
}
