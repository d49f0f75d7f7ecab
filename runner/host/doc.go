// Package host is what the runner needs of the machine it measures on: the host lock that
// runs take turns on (servers listen on fixed ports, measurements own CPUs), the CPU split
// between servers and load tools, and the open-files limit.
package host
