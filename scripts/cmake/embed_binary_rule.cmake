# embed_binary(OUT PREFIX FILES...): a build rule that embeds FILES byte for
# byte into the assembly file OUT (embed_binary.cmake), as the table
# PREFIX_files / PREFIX_file_count; with ATTN_EMBED_BASE set, the files are
# named by their paths under it. Included by the top-level CMakeLists.txt.
set(ATTN_EMBED_BINARY_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/embed_binary.cmake)
function(embed_binary out prefix)
  add_custom_command(
    OUTPUT ${out}
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} -DPREFIX=${prefix} -DBASE=${ATTN_EMBED_BASE} -DFILES="${ARGN}"
            -P ${ATTN_EMBED_BINARY_SCRIPT}
    DEPENDS ${ARGN} ${ATTN_EMBED_BINARY_SCRIPT}
    COMMENT "Embedding ${prefix}")
  # clang's assembler reads a .s file without preprocessing it, and says the
  # dependency-file flags CMake passes (-MD, -MF) went unused.
  set_source_files_properties(${out} PROPERTIES OBJECT_DEPENDS "${ARGN}")
  if(CMAKE_ASM_COMPILER_ID STREQUAL "Clang")
    set_source_files_properties(${out} PROPERTIES COMPILE_OPTIONS -Wno-unused-command-line-argument)
  endif()
endfunction()
