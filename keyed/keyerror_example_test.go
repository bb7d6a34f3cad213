package keyed_test

import (
	"errors"
	"fmt"
	"math"

	"github.com/levee-go/levee/keyed"
)

// A key that could never be found again — a NaN — and a key Go cannot hash are refused
// before anything is stored.
func ExampleErrKeyNotComparable() {
	k, _ := keyed.New(keyed.Config{MaxKeys: 2}, func(key any) (string, error) { return fmt.Sprint(key), nil })
	_, err := k.Get(math.NaN())
	fmt.Println(err)
	_, err = k.Get([]int{1})
	fmt.Println(errors.Is(err, keyed.ErrKeyNotComparable))
	v, _ := k.Get(1.5)
	fmt.Println(v, k.Metrics().Keys)
	// Output:
	// keyed: key of type float64 refused: it is or holds a NaN, which never equals itself, so it could never be found again
	// true
	// 1.5 1
}
