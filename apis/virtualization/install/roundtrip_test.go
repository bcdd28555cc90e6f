package install

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/apitesting/roundtrip"

	"kubevirt.dev/virt/apis/virtualization/fuzzer"
)

// TestRoundTripJSON fuzzes every kind and checks it survives internal ->
// v1 JSON/YAML -> internal unchanged.
func TestRoundTripJSON(t *testing.T) {
	roundtrip.RoundTripTestForAPIGroup(t, Install, fuzzer.Funcs)
}

// TestRoundTripProtobuf does the same through the protobuf serializer; it
// fails if generated.pb.go is missing or stale.
func TestRoundTripProtobuf(t *testing.T) {
	roundtrip.RoundTripProtobufTestForAPIGroup(t, Install, fuzzer.Funcs)
}
