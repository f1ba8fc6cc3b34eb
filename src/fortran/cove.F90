! Cove's Fortran API: the module cove, over the C API (include/cove.h).
!
! Every procedure is an integer function returning a status from the one
! status table (include/cove/status_table.h): COVE_OK (0) or an error
! code; cove_last_error() then describes the error. Nothing stops the
! program or prints.
!
! Arrays: cove_put, cove_put_local and cove_get take assumed-shape arrays
! of real(real32), real(real64), integer(int32) and integer(int64), ranks 1
! to 4. A variable's dimensions are in the same order in Fortran as in C:
! a(i,j,k) here is x[i][j][k] of a C program (the module passes layout
! "F"); the region is shape(a), at start(:), the 0-based global offsets of
! a's first element (absent: all zeros). Versions, shapes, offsets and
! timeouts are integer(int64). Strided sections are copied to and from a
! packed temporary; put_local refuses them. docs/fortran.md says more.
!
! Ownership: a cove_client is a handle; copies of it refer to the same
! connection, which cove_disconnect closes once. Arrays are used only during
! the call, except put_local's, which must stay valid and unchanged (declare
! them target) until cove_release or cove_disconnect.
! Blocking: every call blocks until done; gets wait as timeout_ms says
! (COVE_WAIT_FOREVER, the default: until the data is there; 0: answer at
! once; > 0: that many milliseconds, then COVE_TIMEOUT): the one timeout
! rule of every language (docs/staging.md, "Timeouts").
! Thread-safety: a client may be used from several threads at once;
! cove_last_error() is per thread.
module cove
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int64_t, c_loc, c_null_char, c_ptr, c_size_t, &
                                         c_associated, c_f_pointer, c_null_ptr
  use, intrinsic :: iso_fortran_env, only: int32, int64, real32, real64
  use cove_c_api
  implicit none
  private

  public :: cove_client
  public :: cove_connect, cove_connect_ticket, cove_connect_with_ticket, cove_disconnect, cove_define, cove_put, cove_put_local, cove_release, cove_get, &
            cove_seal, cove_derive, cove_latest, cove_remove, cove_put_meta, cove_get_meta, cove_last_error, cove_strerror, &
            cove_status_name

  ! The status codes, from the one table: COVE_OK, COVE_INVALID_ARGUMENT, ...
#include <cove/status_table.h>
#define COVE_X(c_name, cpp_name, value, text) integer, parameter, public :: c_name = value;
  COVE_STATUS_TABLE(COVE_X)
#undef COVE_X

  ! cove_get_meta's modes (cove_meta_mode in cove.h).
  integer, parameter, public :: COVE_META_EXACT = 0, COVE_META_NEXT = 1, COVE_META_LATEST = 2
  ! A get's timeout_ms that waits until the data is there.
  integer(int64), parameter, public :: COVE_WAIT_FOREVER = -1_int64

  ! A connection to a group of staging servers (cove_connect).
  type :: cove_client
    private
    type(c_ptr) :: handle = c_null_ptr
  end type

  interface
    function c_strlen(s) bind(c, name="strlen")
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: c_strlen
    end function
  end interface

  ! The generic cove_put, cove_put_local and cove_get (generated: see CMakeLists.txt).
#include "array_interfaces.inc"

contains

  ! target: a connection file, server addresses separated by commas, or
  ! absent / "" for the COVE_CONNECT environment variable. timeout_ms: how
  ! long to wait for a server to appear (default 10000).
  integer function cove_connect(client, target, timeout_ms) result(status)
    type(cove_client), intent(inout) :: client
    character(*), intent(in), optional :: target
    integer(int64), intent(in), optional :: timeout_ms
    integer(int64) :: wait

    wait = 10000
    if (present(timeout_ms)) wait = timeout_ms
    call c_own_error_clear()
    if (present(target)) then
      status = c_connect(c_str(target), wait, client%handle)
    else
      status = c_connect(c_str(""), wait, client%handle)
    end if
  end function

  ! A collective connect's two halves (module cove_mpi's cove_connect_comm
  ! uses them; cove.h says more): one rank resolves target (as
  ! cove_connect does, waiting timeout_ms, default 10000) into ticket, which
  ! holds the servers' addresses and the group's secret: pass it to the
  ! other ranks of the job only. Every rank then connects with it.
  integer function cove_connect_ticket(ticket, target, timeout_ms) result(status)
    character(:), allocatable, intent(out) :: ticket
    character(*), intent(in), optional :: target
    integer(int64), intent(in), optional :: timeout_ms
    integer(int64) :: wait
    integer(c_size_t) :: size
    character(kind=c_char) :: none(1)

    wait = 10000
    if (present(timeout_ms)) wait = timeout_ms
    call c_own_error_clear()
    ! The size first, then the ticket (resolving the target twice: a
    ! connection file read twice says the same).
    if (present(target)) then
      status = c_connect_ticket(c_str(target), wait, none, 0_c_size_t, size)
    else
      status = c_connect_ticket(c_str(""), wait, none, 0_c_size_t, size)
    end if
    if (status /= COVE_OK) then
      ticket = ""
      return
    end if
    allocate(character(size) :: ticket)
    if (present(target)) then
      status = c_connect_ticket(c_str(target), wait, ticket, size, size)
    else
      status = c_connect_ticket(c_str(""), wait, ticket, size, size)
    end if
    if (status /= COVE_OK) ticket = ""
  end function

  integer function cove_connect_with_ticket(client, ticket, timeout_ms) result(status)
    type(cove_client), intent(inout) :: client
    character(*), intent(in) :: ticket
    integer(int64), intent(in), optional :: timeout_ms
    integer(int64) :: wait

    wait = 10000
    if (present(timeout_ms)) wait = timeout_ms
    call c_own_error_clear()
    status = c_connect_with_ticket(ticket, len(ticket, c_size_t), wait, client%handle)
  end function

  ! Releases this client's put_local pieces and closes the connection; the
  ! handle is then unconnected (disconnecting it again does nothing).
  integer function cove_disconnect(client) result(status)
    type(cove_client), intent(inout) :: client

    call c_own_error_clear()
    status = c_disconnect(client%handle)
    client%handle = c_null_ptr
  end function

  ! dtype: a numpy-style name ("f8", "<f4", "int32", ...). shape: the global
  ! extents, in the order of the Fortran array's dimensions (absent: none).
  ! reorg, layouts: where layouts are reorganized for this variable
  ! (docs/layouts.md; absent: the server's). fill: the bytes of one element
  ! that cells of a sealed version no put covered read as, e.g.
  ! transfer(-1.0_real64, repeat(' ', 8)) (absent: none).
  integer function cove_define(client, name, dtype, shape, reorg, layouts, fill) result(status)
    type(cove_client), intent(in) :: client
    character(*), intent(in) :: name, dtype
    integer(int64), intent(in), optional :: shape(:)
    character(*), intent(in), optional :: reorg, layouts, fill
    integer(int64), allocatable :: extents(:)

    if (present(shape)) then
      extents = shape
    else
      allocate(extents(0))
    end if
    call c_own_error_clear()
    if (present(fill)) then
      ! The fill value first; reorg and layouts then define it again with them.
      status = c_define_fill(client%handle, c_str(name), c_str(dtype), size(extents), extents, fill, &
                             len(fill, c_size_t))
      if (status /= COVE_OK .or. .not. (present(reorg) .or. present(layouts))) return
    end if
    if (present(reorg) .and. present(layouts)) then
      status = c_define_reorg(client%handle, c_str(name), c_str(dtype), size(extents), extents, &
                              c_str(reorg), c_str(layouts))
    else if (present(reorg)) then
      status = c_define_reorg(client%handle, c_str(name), c_str(dtype), size(extents), extents, reorg=c_str(reorg))
    else if (present(layouts)) then
      status = c_define_reorg(client%handle, c_str(name), c_str(dtype), size(extents), extents, &
                              layouts=c_str(layouts))
    else
      status = c_define(client%handle, c_str(name), c_str(dtype), size(extents), extents)
    end if
  end function

  ! Blocks until no reader copies the put_local piece of region count(:) at
  ! start(:) (absent: the origin) any more; then its array may be reused.
  ! released: how many pieces the servers dropped.
  integer function cove_release(client, var, version, count, start, released) result(status)
    type(cove_client), intent(in) :: client
    character(*), intent(in) :: var
    integer(int64), intent(in) :: version
    integer(int64), intent(in) :: count(:)
    integer(int64), intent(in), optional :: start(:)
    integer(int64), intent(out), optional :: released
    integer(int64) :: origin(size(count))
    integer(c_size_t) :: dropped

    if (present(released)) released = 0
    status = region_of("release", var, version, count, start, origin)
    if (status /= COVE_OK) return
    call c_own_error_clear()
    status = c_release(client%handle, c_str(var), version, size(count), origin, count, dropped)
    if (present(released)) released = int(dropped, int64)
  end function

  ! Seals a version on every server: gets of it never wait (cells no put
  ! covered read as the fill value, or COVE_NOT_FOUND without one) and puts
  ! into it fail. Sealing again is no error: already says whether it was.
  integer function cove_seal(client, var, version, already) result(status)
    type(cove_client), intent(in) :: client
    character(*), intent(in) :: var
    integer(int64), intent(in) :: version
    logical, intent(out), optional :: already
    integer(c_int) :: was

    if (present(already)) already = .false.
    status = check_version("seal", var, version)
    if (status /= COVE_OK) return
    call c_own_error_clear()
    status = c_seal(client%handle, c_str(var), version, was)
    if (present(already)) already = status == COVE_OK .and. was /= 0
  end function

  ! Version `to` of each variable in vars starts as version `from`, sharing
  ! its pieces without copying; puts into it then override them. All or
  ! nothing. shared: the pieces shared.
  integer function cove_derive(client, vars, from, to, shared) result(status)
    type(cove_client), intent(in) :: client
    character(*), intent(in) :: vars(:)
    integer(int64), intent(in) :: from, to
    integer(int64), intent(out), optional :: shared
    character(kind=c_char, len=:), allocatable, target :: names(:)
    type(c_ptr) :: pointers(size(vars))
    integer(c_size_t) :: n
    integer :: i

    if (present(shared)) shared = 0
    if (size(vars) == 0) then
      status = own_error(COVE_INVALID_ARGUMENT, "derive names no variable")
      return
    end if
    status = check_version("derive", vars(1), from)
    if (status == COVE_OK) status = check_version("derive", vars(1), to)
    if (status /= COVE_OK) return
    allocate(character(kind=c_char, len=len(vars) + 1) :: names(size(vars)))
    do i = 1, size(vars)
      names(i) = trim(vars(i)) // c_null_char
      pointers(i) = c_loc(names(i))
    end do
    call c_own_error_clear()
    status = c_derive(client%handle, pointers, size(vars, kind=c_size_t), from, to, n)
    if (present(shared)) shared = int(n, int64)
  end function

  ! The newest version of var (COVE_NOT_FOUND when it has none).
  integer function cove_latest(client, var, version) result(status)
    type(cove_client), intent(in) :: client
    character(*), intent(in) :: var
    integer(int64), intent(out) :: version

    call c_own_error_clear()
    status = c_latest(client%handle, c_str(var), version)
  end function

  integer function cove_remove(client, var, version) result(status)
    type(cove_client), intent(in) :: client
    character(*), intent(in) :: var
    integer(int64), intent(in) :: version

    status = check_version("remove", var, version)
    if (status /= COVE_OK) return
    call c_own_error_clear()
    status = c_remove(client%handle, c_str(var), version)
  end function

  ! Metadata: a blob of bytes per name and version, here a character string
  ! (transfer() turns other data into one and back).
  integer function cove_put_meta(client, name, version, text) result(status)
    type(cove_client), intent(in) :: client
    character(*), intent(in) :: name, text
    integer(int64), intent(in) :: version

    status = check_version("put_meta", name, version)
    if (status /= COVE_OK) return
    call c_own_error_clear()
    status = c_put_meta(client%handle, c_str(name), version, text, len(text, c_size_t))
  end function

  ! text receives the whole blob, at its length (""  on error). mode:
  ! COVE_META_EXACT (default) takes version, COVE_META_NEXT the first
  ! after it, COVE_META_LATEST ignores it. found_version: the blob's version.
  integer function cove_get_meta(client, name, version, text, mode, timeout_ms, found_version) result(status)
    type(cove_client), intent(in) :: client
    character(*), intent(in) :: name
    integer(int64), intent(in) :: version
    character(:), allocatable, intent(out) :: text
    integer, intent(in), optional :: mode
    integer(int64), intent(in), optional :: timeout_ms
    integer(int64), intent(out), optional :: found_version
    integer(c_int) :: how
    integer(int64) :: which, wait, found
    integer(c_size_t) :: size

    if (present(found_version)) found_version = 0
    how = COVE_META_EXACT
    if (present(mode)) how = mode
    which = version
    wait = COVE_WAIT_FOREVER
    if (present(timeout_ms)) wait = timeout_ms
    if (how /= COVE_META_LATEST) then
      status = check_version("get_meta", name, version)
      if (status /= COVE_OK) then
        text = ""
        return
      end if
    end if
    allocate(character(256) :: text)
    ! Until the buffer holds the whole blob: a larger one, for the version found.
    do
      call c_own_error_clear()
      status = c_get_meta(client%handle, c_str(name), how, which, wait, text, len(text, c_size_t), size, found)
      if (status /= COVE_OK) then
        text = ""
        return
      end if
      if (size <= len(text, c_size_t)) exit
      deallocate(text)
      allocate(character(size) :: text)
      how = COVE_META_EXACT
      which = found
      wait = 0
    end do
    text = text(1:size)
    if (present(found_version)) found_version = found
  end function

  ! The message of this thread's last failed Cove call ("" if none).
  function cove_last_error() result(message)
    character(:), allocatable :: message

    message = f_str(c_own_last_error())
  end function

  ! One line describing a status, e.g. "invalid argument".
  function cove_strerror(status) result(text)
    integer, intent(in) :: status
    character(:), allocatable :: text

    text = f_str(c_strerror(status))
  end function

  ! The status's name without prefix, e.g. "INVALID_ARGUMENT".
  function cove_status_name(status) result(text)
    integer, intent(in) :: status
    character(:), allocatable :: text

    text = f_str(c_status_name(status))
  end function

  ! --- helpers of the typed procedures ---

  integer function put_region(client, what, var, version, count, start, data, bytes, local) result(status)
    type(cove_client), intent(in) :: client
    character(*), intent(in) :: what, var
    integer(int64), intent(in) :: version, count(:)
    integer(int64), intent(in), optional :: start(:)
    type(c_ptr), intent(in) :: data
    integer(c_size_t), intent(in) :: bytes
    logical, intent(in) :: local
    integer(int64) :: origin(size(count))

    status = region_of(what, var, version, count, start, origin)
    if (status /= COVE_OK) return
    call c_own_error_clear()
    if (local) then
      status = c_put_local(client%handle, c_str(var), version, size(count), origin, count, data, bytes, c_str("F"))
    else
      status = c_put(client%handle, c_str(var), version, size(count), origin, count, data, bytes, c_str("F"))
    end if
  end function

  integer function get_region(client, var, version, count, start, data, bytes, timeout_ms) result(status)
    type(cove_client), intent(in) :: client
    character(*), intent(in) :: var
    integer(int64), intent(in) :: version, count(:)
    integer(int64), intent(in), optional :: start(:), timeout_ms
    type(c_ptr), intent(in) :: data
    integer(c_size_t), intent(in) :: bytes
    integer(int64) :: origin(size(count)), wait

    status = region_of("get", var, version, count, start, origin)
    if (status /= COVE_OK) return
    wait = COVE_WAIT_FOREVER
    if (present(timeout_ms)) wait = timeout_ms
    call c_own_error_clear()
    status = c_get(client%handle, c_str(var), version, size(count), origin, count, data, bytes, wait, c_str("F"))
  end function

  ! origin: start, checked to have one entry per dimension, or zeros.
  integer function region_of(what, var, version, count, start, origin) result(status)
    character(*), intent(in) :: what, var
    integer(int64), intent(in) :: version, count(:)
    integer(int64), intent(in), optional :: start(:)
    integer(int64), intent(out) :: origin(:)

    origin = 0
    status = check_version(what, var, version)
    if (status /= COVE_OK .or. .not. present(start)) return
    if (size(start) /= size(count)) then
      status = own_error(COVE_INVALID_ARGUMENT, what//" of '"//trim(var)//"': start has "//decimal(size(start, kind=int64))// &
                         " entries for "//decimal(size(count, kind=int64))//" dimensions")
      return
    end if
    origin = start
  end function

  ! Versions are unsigned in C: a negative one would wrap to a huge number.
  integer function check_version(what, var, version) result(status)
    character(*), intent(in) :: what, var
    integer(int64), intent(in) :: version

    status = COVE_OK
    if (version < 0) status = own_error(COVE_INVALID_ARGUMENT, what//" of '"//trim(var)//"': version "// &
                                        decimal(version)//" is negative")
  end function

  integer function own_error(code, message) result(status)
    integer, intent(in) :: code
    character(*), intent(in) :: message

    call c_own_error_set(c_str(message))
    status = code
  end function

  pure integer(c_size_t) function bytes_of(elements, bits)
    integer(int64), intent(in) :: elements
    integer, intent(in) :: bits

    bytes_of = int(elements, c_size_t) * int(bits / 8, c_size_t)
  end function

  ! Trailing blanks are dropped: names in fixed-length variables work.
  pure function c_str(s) result(c)
    character(*), intent(in) :: s
    character(kind=c_char, len=len_trim(s) + 1) :: c

    c = trim(s)//c_null_char
  end function

  function f_str(p) result(s)
    type(c_ptr), intent(in) :: p
    character(:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: i

    if (.not. c_associated(p)) then
      s = ""
      return
    end if
    call c_f_pointer(p, chars, [c_strlen(p)])
    allocate(character(size(chars)) :: s)
    do i = 1, size(chars)
      s(i:i) = chars(i)
    end do
  end function

  function decimal(n) result(s)
    integer(int64), intent(in) :: n
    character(:), allocatable :: s
    character(24) :: buffer

    write (buffer, '(i0)') n
    s = trim(buffer)
  end function

#include "array_procedures.inc"
end module cove
