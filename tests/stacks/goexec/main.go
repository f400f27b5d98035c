// os/exec: fork and exec children, read their output, and wait for them.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// #include <stdlib.h>
import "C"

func main() {
	_ = C.abs(1)
	for i := 0; i < 5; i++ {
		out, err := exec.Command("/bin/echo", "child", fmt.Sprint(i)).Output()
		if err != nil {
			fmt.Println("exec:", err)
			os.Exit(1)
		}
		fmt.Print(string(out))
	}
	cmd := exec.Command("/bin/sh", "-c", "exit 3")
	err := cmd.Run()
	fmt.Println("sh:", strings.TrimSpace(fmt.Sprint(err)))
}
