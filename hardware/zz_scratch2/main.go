package main

import (
	"fmt"

	"github.com/hwtest/hwtest/runtime"
)

func main() {
	_, err := runtime.Init()
	fmt.Printf("init => %v\n", err)
	fmt.Printf("cuda probe => %q\n", runtime.Unavailable(runtime.Target{ID: "cuda", Runner: "native", Provider: "CUDAExecutionProvider"}))
}
