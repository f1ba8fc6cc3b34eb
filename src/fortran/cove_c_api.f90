! The C API (include/cove.h) as Fortran sees it: one interface per entry
! point the module cove uses, and the Fortran front end's own per-thread
! error message (own_error.c). Internal to libcove-fortran: programs use
! the module cove, never this one.
module cove_c_api
  use, intrinsic :: iso_c_binding, only: c_char, c_int, c_int64_t, c_ptr, c_size_t
  implicit none
  private
  public :: c_connect, c_connect_ticket, c_connect_with_ticket, c_disconnect, c_define, c_define_reorg, c_define_fill, c_seal, c_derive, c_put, &
            c_put_local, c_get, c_release, c_latest, c_remove, c_put_meta, c_get_meta, c_strerror, c_status_name, &
            c_own_error_set, c_own_error_clear, c_own_last_error

  ! uint64_t versions are passed as int64_t: same size and bits, and the
  ! module cove refuses negative versions before they get here.
  interface
    integer(c_int) function c_connect(target, timeout_ms, client) bind(c, name="cove_connect")
      import :: c_char, c_int, c_int64_t, c_ptr
      character(kind=c_char), intent(in) :: target(*)
      integer(c_int64_t), value :: timeout_ms
      type(c_ptr), intent(out) :: client
    end function

    integer(c_int) function c_connect_ticket(target, timeout_ms, ticket, capacity, size) &
        bind(c, name="cove_connect_ticket")
      import :: c_char, c_int, c_int64_t, c_size_t
      character(kind=c_char), intent(in) :: target(*)
      integer(c_int64_t), value :: timeout_ms
      character(kind=c_char), intent(out) :: ticket(*)
      integer(c_size_t), value :: capacity
      integer(c_size_t), intent(out) :: size
    end function

    integer(c_int) function c_connect_with_ticket(ticket, size, timeout_ms, client) &
        bind(c, name="cove_connect_with_ticket")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      character(kind=c_char), intent(in) :: ticket(*)
      integer(c_size_t), value :: size
      integer(c_int64_t), value :: timeout_ms
      type(c_ptr), intent(out) :: client
    end function

    integer(c_int) function c_disconnect(client) bind(c, name="cove_disconnect")
      import :: c_int, c_ptr
      type(c_ptr), value :: client
    end function

    integer(c_int) function c_define(client, name, dtype, ndim, shape) bind(c, name="cove_define")
      import :: c_char, c_int, c_int64_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*), dtype(*)
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
    end function

    integer(c_int) function c_define_reorg(client, name, dtype, ndim, shape, reorg, layouts) &
        bind(c, name="cove_define_reorg")
      import :: c_char, c_int, c_int64_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*), dtype(*)
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
      character(kind=c_char), intent(in), optional :: reorg(*), layouts(*)  ! absent: NULL, the server's
    end function

    integer(c_int) function c_put(client, var, version, ndim, start, count, data, bytes, layout) &
        bind(c, name="cove_put")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: var(*), layout(*)
      integer(c_int64_t), value :: version
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: start(*), count(*)
      type(c_ptr), value :: data
      integer(c_size_t), value :: bytes
    end function

    integer(c_int) function c_put_local(client, var, version, ndim, start, count, data, bytes, layout) &
        bind(c, name="cove_put_local")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: var(*), layout(*)
      integer(c_int64_t), value :: version
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: start(*), count(*)
      type(c_ptr), value :: data
      integer(c_size_t), value :: bytes
    end function

    integer(c_int) function c_get(client, var, version, ndim, start, count, data, bytes, timeout_ms, layout) &
        bind(c, name="cove_get")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: var(*), layout(*)
      integer(c_int64_t), value :: version
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: start(*), count(*)
      type(c_ptr), value :: data
      integer(c_size_t), value :: bytes
      integer(c_int64_t), value :: timeout_ms
    end function

    integer(c_int) function c_release(client, var, version, ndim, start, count, released) &
        bind(c, name="cove_release")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: var(*)
      integer(c_int64_t), value :: version
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: start(*), count(*)
      integer(c_size_t), intent(out) :: released
    end function

    integer(c_int) function c_define_fill(client, name, dtype, ndim, shape, fill, fill_bytes) &
        bind(c, name="cove_define_fill")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*), dtype(*)
      integer(c_int), value :: ndim
      integer(c_int64_t), intent(in) :: shape(*)
      character(kind=c_char), intent(in) :: fill(*)
      integer(c_size_t), value :: fill_bytes
    end function

    integer(c_int) function c_seal(client, var, version, already) bind(c, name="cove_seal")
      import :: c_char, c_int, c_int64_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: var(*)
      integer(c_int64_t), value :: version
      integer(c_int), intent(out) :: already
    end function

    integer(c_int) function c_derive(client, vars, nvars, from, to, shared) bind(c, name="cove_derive")
      import :: c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      type(c_ptr), intent(in) :: vars(*)
      integer(c_size_t), value :: nvars
      integer(c_int64_t), value :: from, to
      integer(c_size_t), intent(out) :: shared
    end function

    integer(c_int) function c_latest(client, var, version) bind(c, name="cove_latest")
      import :: c_char, c_int, c_int64_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: var(*)
      integer(c_int64_t), intent(out) :: version
    end function

    integer(c_int) function c_remove(client, var, version) bind(c, name="cove_remove")
      import :: c_char, c_int, c_int64_t, c_ptr
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: var(*)
      integer(c_int64_t), value :: version
    end function

    integer(c_int) function c_put_meta(client, name, version, data, bytes) bind(c, name="cove_put_meta")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*), data(*)
      integer(c_int64_t), value :: version
      integer(c_size_t), value :: bytes
    end function

    integer(c_int) function c_get_meta(client, name, mode, version, timeout_ms, data, capacity, size, &
                                       found_version) bind(c, name="cove_get_meta")
      import :: c_char, c_int, c_int64_t, c_ptr, c_size_t
      type(c_ptr), value :: client
      character(kind=c_char), intent(in) :: name(*)
      integer(c_int), value :: mode  ! a C enum: int-sized
      integer(c_int64_t), value :: version, timeout_ms
      character(kind=c_char), intent(inout) :: data(*)
      integer(c_size_t), value :: capacity
      integer(c_size_t), intent(out) :: size
      integer(c_int64_t), intent(out) :: found_version
    end function

    type(c_ptr) function c_strerror(status) bind(c, name="cove_strerror")
      import :: c_int, c_ptr
      integer(c_int), value :: status
    end function

    type(c_ptr) function c_status_name(status) bind(c, name="cove_status_name")
      import :: c_int, c_ptr
      integer(c_int), value :: status
    end function

    subroutine c_own_error_set(message) bind(c, name="cove_fortran_error_set")
      import :: c_char
      character(kind=c_char), intent(in) :: message(*)
    end subroutine

    subroutine c_own_error_clear() bind(c, name="cove_fortran_error_clear")
    end subroutine

    type(c_ptr) function c_own_last_error() bind(c, name="cove_fortran_last_error")
      import :: c_ptr
    end function
  end interface
end module cove_c_api
