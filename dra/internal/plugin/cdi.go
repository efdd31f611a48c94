package plugin

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// CDIKind is the CDI vendor/class of the devices this driver hands out.
const CDIKind = "tessera.io/mig"

// cdiSpec is a Container Device Interface spec (cdiVersion 0.6.0).
type cdiSpec struct {
	CDIVersion string      `json:"cdiVersion"`
	Kind       string      `json:"kind"`
	Devices    []cdiDevice `json:"devices"`
}

type cdiDevice struct {
	Name           string         `json:"name"`
	ContainerEdits containerEdits `json:"containerEdits"`
}

type containerEdits struct {
	Env         []string     `json:"env,omitempty"`
	DeviceNodes []deviceNode `json:"deviceNodes,omitempty"`
}

type deviceNode struct {
	Path string `json:"path"`
}

// cdiSpecPath is the claim's spec file: one per claim, named after its UID
// so that a runtime's cache never mistakes it for another claim's.
func cdiSpecPath(dir, claimUID string) string {
	return filepath.Join(dir, fmt.Sprintf("tessera.io-mig-%s.json", claimUID))
}

// writeCDISpec writes the claim's devices: each sets NVIDIA_VISIBLE_DEVICES
// and CUDA_VISIBLE_DEVICES to its MIG UUID and adds the GPU's device nodes.
func writeCDISpec(dir, claimUID string, devices []PreparedDevice) error {
	spec := cdiSpec{CDIVersion: "0.6.0", Kind: CDIKind}
	for _, d := range devices {
		spec.Devices = append(spec.Devices, cdiDevice{
			Name: cdiName(claimUID, d.Device),
			ContainerEdits: containerEdits{
				Env: []string{"NVIDIA_VISIBLE_DEVICES=" + d.MigUUID, "CUDA_VISIBLE_DEVICES=" + d.MigUUID},
				DeviceNodes: []deviceNode{
					{Path: "/dev/nvidiactl"}, {Path: "/dev/nvidia-uvm"}, {Path: fmt.Sprintf("/dev/nvidia%d", d.GPU)},
				},
			},
		})
	}
	data, err := json.MarshalIndent(spec, "", "  ")
	if err != nil {
		return err
	}
	return writeFileAtomically(cdiSpecPath(dir, claimUID), append(data, '\n'))
}

// cdiName is a device's CDI name: the claim's UID and the device's name.
func cdiName(claimUID, device string) string { return claimUID + "-" + device }

func removeCDISpec(dir, claimUID string) error {
	err := os.Remove(cdiSpecPath(dir, claimUID))
	if os.IsNotExist(err) {
		return nil
	}
	return err
}
