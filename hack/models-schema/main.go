// Command models-schema prints the OpenAPI v2 definitions of generated/openapi
// as one swagger document. applyconfiguration-gen reads it to learn the list
// and map semantics (listType, listMapKey) that server-side apply follows.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"k8s.io/kube-openapi/pkg/common"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"kubevirt.dev/virt/generated/openapi"
)

func main() {
	if err := json.NewEncoder(os.Stdout).Encode(swagger()); err != nil {
		fmt.Fprintf(os.Stderr, "models-schema: %v\n", err)
		os.Exit(1)
	}
}

func swagger() *spec.Swagger {
	ref := func(name string) spec.Ref { return spec.MustCreateRef("#/definitions/" + name) }
	defs := spec.Definitions{}
	for name, def := range openapi.GetOpenAPIDefinitions(ref) {
		// Types with a hand-written v3 schema embed their v2 form in an
		// extension; applyconfiguration-gen only understands v2.
		if v2, ok := def.Schema.Extensions[common.ExtensionV2Schema].(spec.Schema); ok {
			defs[name] = v2
			continue
		}
		defs[name] = def.Schema
	}
	return &spec.Swagger{SwaggerProps: spec.SwaggerProps{
		Swagger:     "2.0",
		Info:        &spec.Info{InfoProps: spec.InfoProps{Title: "virtualization.kubevirt.io", Version: "unversioned"}},
		Definitions: defs,
	}}
}
