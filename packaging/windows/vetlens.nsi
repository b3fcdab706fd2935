; The VetLens installer (make windows-installer; NSIS from Debian's nsis).
; makensis -DDIST=dist/windows -DVERSION=3.3.0 -DOUT=build/VetLens-3.3.0-setup.exe
; Installs dist/windows (vetlens.exe, its DLLs, onnxruntime.dll, the models,
; the icon) under Program Files\VetLens with a Start-menu entry and an
; uninstaller. The data directory is never here: vetlens gui keeps it in
; the user's %AppData%\vetlens (os.UserConfigDir), which uninstalling
; leaves alone. A 64-bit installer (amd64-unicode stub), so wine64 alone runs it.
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
  CreateShortcut "$SMPROGRAMS\VetLens.lnk" "$INSTDIR\vetlens.exe" "gui" "$INSTDIR\vetlens.ico"
  WriteRegStr HKLM "${UNINST}" "DisplayName" "VetLens"
  WriteRegStr HKLM "${UNINST}" "DisplayVersion" "${VERSION}"
  WriteRegStr HKLM "${UNINST}" "DisplayIcon" "$INSTDIR\vetlens.ico"
  WriteRegStr HKLM "${UNINST}" "UninstallString" '"$INSTDIR\uninstall.exe"'
  WriteRegDWORD HKLM "${UNINST}" "NoModify" 1
  WriteRegDWORD HKLM "${UNINST}" "NoRepair" 1
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
