package runtime

import (
	goruntime "runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// What Dawn wrote to stderr on this machine when the WebGPU EP was appended
// without a Vulkan loader, byte for byte.
const dawnVulkanWarning = "Warning: Couldn't load Vulkan: libvulkan.so.1: cannot open shared object file: No such file or directory\n" +
	"    at operator() (/build/Release/_deps/dawn-src/src/dawn/native/vulkan/BackendVk.cpp:368)\n\n"

// Dawn's warnings become one line each; everything else is kept as it was,
// including a "Warning:" of someone else's and lines around Dawn's.
func TestDawnWarnings(t *testing.T) {
	other := "2026-11-24 04:50:00.1 [W:onnxruntime:, session_state.cc:1280] some nodes were not assigned\n"
	notDawn := "Warning: something else\n    at main (/src/app.cc:3)\n"
	warnings, rest := dawnWarnings(other + dawnVulkanWarning + notDawn + "last line without newline")
	if !slices.Equal(warnings, []string{"Couldn't load Vulkan: libvulkan.so.1: cannot open shared object file: No such file or directory"}) {
		t.Errorf("warnings %q", warnings)
	}
	if want := other + notDawn + "last line without newline"; rest != want {
		t.Errorf("rest %q, want %q", rest, want)
	}
	if w, r := dawnWarnings(""); len(w) != 0 || r != "" {
		t.Errorf("nothing captured: %q %q", w, r)
	}
}

// What is written to file descriptor 2 while fn runs is captured, more than a
// pipe holds included; afterwards descriptor 2 writes where it did before.
func TestCaptureNativeStderr(t *testing.T) {
	if goruntime.GOOS != "linux" {
		t.Skip("stderr is captured on Linux only")
	}
	big := strings.Repeat("x", 200<<10) + "\n"
	got := captureNativeStderr(func() {
		syscall.Write(2, []byte(dawnVulkanWarning))
		syscall.Write(2, []byte(big))
	})
	if got != dawnVulkanWarning+big {
		t.Errorf("captured %d bytes, want %d", len(got), len(dawnVulkanWarning+big))
	}
	again := captureNativeStderr(func() { syscall.Write(2, []byte("second\n")) })
	if again != "second\n" {
		t.Errorf("a second capture got %q", again)
	}
}
