; The VetLens installer (make windows-installer; NSIS from Debian's nsis).
; makensis -DDIST=dist/windows -DVERSION=3.3.0 -DOUT=build/VetLens-3.3.0-setup.exe
; Installs dist/windows (vetlens.exe, its DLLs, onnxruntime.dll, the models,
; the icon) under Program Files\VetLens with a Start-menu entry and an
; uninstaller. The data directory is never here: vetlens gui keeps it in
; the user's %AppData%\vetlens (os.UserConfigDir), which uninstalling
; leaves alone. A 64-bit installer (amd64-unicode stub), so wine64 alone runs it.
; The Start-menu entry starts vetlens-gui.exe (the app without a console
; window). onnxruntime.dll needs the Visual C++ 2015-2022 Redistributable
; (x64), which VetLens may not ship: when its DLLs are missing the installer
; says so and offers the download page (silent installs only log it).
Target amd64-unicode
!include "x64.nsh"
!include "MUI2.nsh"

Name "VetLens ${VERSION}"
OutFile "${OUT}"
InstallDir "$PROGRAMFILES64\VetLens"
RequestExecutionLevel admin
SetCompressor /SOLID lzma
!define MUI_ICON "${DIST}\vetlens.ico"
!define MUI_UNICON "${DIST}\vetlens.ico"
!define UNINST "Software\Microsoft\Windows\CurrentVersion\Uninstall\VetLens"
!define VCREDIST_URL "https://aka.ms/vs/17/release/vc_redist.x64.exe"

!insertmacro MUI_PAGE_DIRECTORY
!insertmacro MUI_PAGE_INSTFILES
!insertmacro MUI_UNPAGE_CONFIRM
!insertmacro MUI_UNPAGE_INSTFILES
!insertmacro MUI_LANGUAGE "English"

Function .onInit
  ${IfNot} ${RunningX64}
    MessageBox MB_ICONSTOP "VetLens needs 64-bit Windows."
    Abort
  ${EndIf}
  SetRegView 64
FunctionEnd

Section "VetLens"
  SetOutPath "$INSTDIR"
  File /r "${DIST}\*.*"
  WriteUninstaller "$INSTDIR\uninstall.exe"
  SetShellVarContext all
  CreateShortcut "$SMPROGRAMS\VetLens.lnk" "$INSTDIR\vetlens-gui.exe" "" "$INSTDIR\vetlens.ico"
  WriteRegStr HKLM "${UNINST}" "DisplayName" "VetLens"
  WriteRegStr HKLM "${UNINST}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKLM "${UNINST}" "DisplayIcon" "$INSTDIR\vetlens.ico"
  WriteRegStr HKLM "${UNINST}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegDWORD HKLM "${UNINST}" "NoModify" 1
  WriteRegDWORD HKLM "${UNINST}" "NoRepair" 1
SectionEnd

; The Visual C++ runtime onnxruntime.dll imports ($SYSDIR is the 64-bit
; System32 in this 64-bit installer).
Section "-Visual C++ runtime check"
  IfFileExists "$SYSDIR\vcruntime140_1.dll" 0 missing
  IfFileExists "$SYSDIR\msvcp140_atomic_wait.dll" 0 missing
  Return
  missing:
  DetailPrint "The Microsoft Visual C++ 2015-2022 Redistributable (x64) is missing: ${VCREDIST_URL}"
  MessageBox MB_YESNO|MB_ICONEXCLAMATION "VetLens needs the Microsoft Visual C++ 2015-2022 Redistributable (x64), which this computer lacks. Open its download page now?$\r$\n${VCREDIST_URL}" /SD IDNO IDNO done
  ExecShell "open" "${VCREDIST_URL}"
  done:
SectionEnd

Function un.onInit
  SetRegView 64
FunctionEnd

Section "Uninstall"
  SetShellVarContext all
  Delete "$SMPROGRAMS\VetLens.lnk"
  RMDir /r "$INSTDIR"
  DeleteRegKey HKLM "${UNINST}"
SectionEnd
