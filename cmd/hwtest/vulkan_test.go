package main

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

// Dawn (inside ONNX Runtime's WebGPU EP) writes a warning to file descriptor 2 when
// it cannot load the Vulkan loader; `hwtest detect` probing webgpu-ort used to
// print it above its own output. It is now said once, where it explains something:
// in webgpu-ort's unavailable reason; stderr no longer carries it.
func TestVulkanWarningIsInTheReasonNotOnStderr(t *testing.T) {
	needSuites(t)
	bin := buildHwtest(t)
	cmd := exec.Command(bin, "detect", "--root", "../..")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("detect: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	if strings.Contains(stderr.String(), "Vulkan") || strings.Contains(stderr.String(), "dawn") {
		t.Fatalf("stderr carries Dawn's warning:\n%s", stderr.String())
	}
	if !strings.Contains(stdout.String(), "Couldn't load Vulkan") {
		t.Skip("Dawn loaded Vulkan here (or said nothing): no warning to place")
	}
	if !strings.Contains(stdout.String(), "No supported adapters (Dawn: Couldn't load Vulkan: libvulkan.so.1: cannot open shared object file") {
		t.Errorf("webgpu-ort's reason lacks Dawn's warning:\n%s", stdout.String())
	}
}
