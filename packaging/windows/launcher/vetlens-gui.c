/* vetlens-gui.exe: the desktop app without a console window.
 *
 * vetlens.exe is a console program, so that `vetlens.exe predict` prints
 * in the console it is run from; started from the Start menu it would open
 * a console window beside the app. This small GUI-subsystem program
 * (-mwindows) starts `vetlens.exe gui ARGS...` from its own folder with
 * CREATE_NO_WINDOW and returns; the Start-menu entry points here. It also
 * carries the VetLens icon (vetlens-gui.rc), which Explorer shows.
 * Built by `make windows` with mingw-w64 (packaging/windows/launcher). */
#include <windows.h>
#include <wchar.h>

int WINAPI wWinMain(HINSTANCE inst, HINSTANCE prev, PWSTR args, int show)
{
	(void)inst; (void)prev; (void)show;
	wchar_t exe[MAX_PATH + 16];
	DWORD n = GetModuleFileNameW(NULL, exe, MAX_PATH);
	wchar_t *slash = n > 0 && n < MAX_PATH ? wcsrchr(exe, L'\\') : NULL;
	if (!slash) {
		MessageBoxW(NULL, L"Cannot find where VetLens is installed.", L"VetLens", MB_ICONERROR);
		return 1;
	}
	wcscpy(slash + 1, L"vetlens.exe");
	size_t len = wcslen(exe) + wcslen(args) + 16;
	wchar_t *line = HeapAlloc(GetProcessHeap(), 0, len * sizeof(wchar_t));
	if (!line)
		return 1;
	swprintf(line, len, L"\"%ls\" gui %ls", exe, args);
	STARTUPINFOW si = {.cb = sizeof si};
	PROCESS_INFORMATION pi;
	if (!CreateProcessW(exe, line, NULL, NULL, FALSE, CREATE_NO_WINDOW, NULL, NULL, &si, &pi)) {
		wchar_t msg[MAX_PATH + 64];
		swprintf(msg, MAX_PATH + 64, L"Cannot start %ls (error %lu).", exe, GetLastError());
		MessageBoxW(NULL, msg, L"VetLens", MB_ICONERROR);
		return 1;
	}
	CloseHandle(pi.hThread);
	CloseHandle(pi.hProcess);
	return 0;
}
