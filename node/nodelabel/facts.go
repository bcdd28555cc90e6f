package nodelabel

import (
	"fmt"
	"io"
	"os"

	"google.golang.org/protobuf/encoding/protojson"

	"kubevirt.dev/virt/internal/capability"
	apiv1 "kubevirt.dev/virt/launcher/api/v1"
	"kubevirt.dev/virt/launcher/layout"
)

// ReadFacts reads the facts virt-handler's init container wrote (virt-launcher
// --probe-node, layout.NodeFactsFile): an InfoResponse as JSON, at most
// layout.NodeFactsMaxBytes. The file is in the handler's own emptyDir,
// written by the platform's launcher image; no tenant reaches it.
func ReadFacts(path string) (capability.Facts, error) {
	f, err := os.Open(path)
	if err != nil {
		return capability.Facts{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, layout.NodeFactsMaxBytes+1))
	if err != nil {
		return capability.Facts{}, fmt.Errorf("read %s: %w", path, err)
	}
	if len(b) > layout.NodeFactsMaxBytes {
		return capability.Facts{}, fmt.Errorf("%s is larger than %d bytes", path, layout.NodeFactsMaxBytes)
	}
	var info apiv1.InfoResponse
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(b, &info); err != nil {
		return capability.Facts{}, fmt.Errorf("parse %s: %w", path, err)
	}
	if info.DomainType == "" || info.LibvirtVersion == "" {
		return capability.Facts{}, fmt.Errorf("%s says no domain type or libvirt version", path)
	}
	return capability.Facts{
		LibvirtVersion:    info.LibvirtVersion,
		HypervisorVersion: info.HypervisorVersion,
		DomainType:        info.DomainType,
	}, nil
}
