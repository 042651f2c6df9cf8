# Compiler warnings, set per target rather than for the whole directory tree, so they apply to
# DelayBridge's own code only.

# -Wall -Wextra on `target`'s own sources; -Werror too when DELAYBRIDGE_WERROR is ON. Every
# library and executable defined in this project calls it (delaybridge_check_warnings enforces).
function(delaybridge_target_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra $<$<BOOL:${DELAYBRIDGE_WERROR}>:-Werror>)
  set_property(TARGET ${target} PROPERTY DELAYBRIDGE_WARNINGS ON)
endfunction()

# Fails the configure step when a target that compiles code under `dir` (recursively) never
# called delaybridge_target_warnings().
function(delaybridge_check_warnings dir)
  get_property(targets DIRECTORY ${dir} PROPERTY BUILDSYSTEM_TARGETS)
  foreach(target IN LISTS targets)
    get_target_property(type ${target} TYPE)
    get_target_property(warnings ${target} DELAYBRIDGE_WARNINGS)
    if(type MATCHES "^(EXECUTABLE|STATIC_LIBRARY|SHARED_LIBRARY|MODULE_LIBRARY|OBJECT_LIBRARY)$"
       AND NOT warnings)
      message(FATAL_ERROR "${dir}: target ${target} has no warning flags; add "
                          "delaybridge_target_warnings(${target}) after its definition")
    endif()
  endforeach()
  get_property(subdirs DIRECTORY ${dir} PROPERTY SUBDIRECTORIES)
  foreach(subdir IN LISTS subdirs)
    delaybridge_check_warnings(${subdir})
  endforeach()
endfunction()
