// Command hello prints hello: the program testbin's test builds.
package main

import "fmt"

func main() { fmt.Println("hello") }
