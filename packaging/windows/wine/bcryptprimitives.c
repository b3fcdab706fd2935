/*
 * For the wine tests only, never shipped: Debian 12's wine 8.0 has no
 * bcryptprimitives.dll, which the Go runtime (1.22 and later) loads from
 * System32 at start for ProcessPrng ("fatal error: bcryptprimitives.dll
 * not found"). Every Windows VetLens supports (10, 11) has it. This stand-in,
 * put into the throwaway wine prefix's system32 by `make test-windows`,
 * fills the buffer from advapi32's RtlGenRandom (SystemFunction036), which
 * wine implements.
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
	while (len > 0) {
		ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!SystemFunction036(data, n))
			return FALSE;
		data += n;
		len -= n;
	}
	return TRUE;
}
