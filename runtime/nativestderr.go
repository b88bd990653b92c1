package runtime

import (
	"strings"
)

// Dawn, the WebGPU implementation inside ONNX Runtime's WebGPU EP, writes its
// warnings straight to the process's stderr (file descriptor 2) when the EP is
// appended, before ONNX Runtime returns its own error: on a machine without a
// Vulkan loader every command that probes webgpu-ort printed
//
//	Warning: Couldn't load Vulkan: libvulkan.so.1: cannot open shared object file: No such file or directory
//	    at operator() (/build/Release/_deps/dawn-src/src/dawn/native/vulkan/BackendVk.cpp:368)
//
// ahead of its own output. The probe captures file descriptor 2 around the append
// and folds such warnings into the target's unavailable reason, where they explain
// it; anything else written there meanwhile goes back to stderr as it was.

// dawnWarnings splits what native code wrote to stderr into Dawn's warnings (each
// "Warning: …" line followed by "    at …" lines naming Dawn's sources), as one line
// per warning, and the rest, byte for byte.
func dawnWarnings(captured string) (warnings []string, rest string) {
	lines := strings.SplitAfter(captured, "\n")
	var kept strings.Builder
	for i := 0; i < len(lines); i++ {
		msg, ok := strings.CutPrefix(lines[i], "Warning: ")
		j := i + 1
		for ok && j < len(lines) && strings.HasPrefix(lines[j], "    at ") {
			j++
		}
		if !ok || j == i+1 || !strings.Contains(strings.Join(lines[i+1:j], ""), "dawn") {
			kept.WriteString(lines[i])
			continue
		}
		warnings = append(warnings, strings.TrimSpace(msg))
		// Dawn ends each warning with a blank line.
		if j < len(lines) && lines[j] == "\n" {
			j++
		}
		i = j - 1
	}
	return warnings, kept.String()
}
